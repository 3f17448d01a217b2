import Lending
import RoomBridgeAPI
import Varlink
import VarlinkNIO

/// A reply of a ``VarlinkMethod`` (RoomBridgeAPI) as the daemon sent it and as its typed reply:
/// tables and sentences read ``value``; `--json` prints ``sent``, so scripts see every field the
/// daemon adds (a rental's `overdue`, which tables compute with ``Rental/isOverdue(at:)``).
struct Answer<M: VarlinkMethod> {
    let sent: [String: JSONValue]
    let value: M.Reply

    /// Decodes `sent`; a reply that does not match the method's type is a protocol error.
    init(_ sent: [String: JSONValue]) throws {
        self.sent = sent
        value = try decode(M.Reply.self, .object(sent))
    }

    /// The reply's one field as sent (`rental` of Lend, `device` of AddDevice), for `--json`.
    var sole: JSONValue { sent.count == 1 ? sent.values.first! : .object(sent) }

    /// One field of a reply with several, as sent, named by the reply type's coding key.
    func sent(_ field: some CodingKey) -> JSONValue? { sent[field.stringValue] }

    /// A list reply's items, each as sent and as its typed value: the reply's one array (a list
    /// method answers with its items and at most a `nextCursor`), in the daemon's order.
    func listed<Item>(_ items: KeyPath<M.Reply, [Item]>) -> [Listed<Item>] {
        let sentItems = sent.values.flatMap { $0.arrayValue ?? [] }
        return zip(sentItems, value[keyPath: items]).map { Listed(sent: $0, value: $1) }
    }
}

/// One item of a list, as sent (for `--json`) and typed (for tables).
struct Listed<Item> {
    let sent: JSONValue
    let value: Item
}

/// Calls a method of RoomBridgeAPI with its typed parameters (errors as ``call(_:_:_:)``).
func call<M: VarlinkMethod>(_ client: VarlinkClient, _ method: M.Type, _ parameters: M.Parameters) async throws -> Answer<M> {
    try Answer<M>(try await call(client, M.name, try JSONValueEncoder().encodeObject(parameters)))
}

/// Calls a method of RoomBridgeAPI that takes no parameters.
func call<M: VarlinkMethod>(_ client: VarlinkClient, _ method: M.Type) async throws -> Answer<M>
    where M.Parameters == VarlinkNothing {
    try await call(client, method, VarlinkNothing())
}

/// A list method's parameters: how many items a page holds, and where it starts.
protocol PagedParameters {
    var limit: Int? { get set }
    var cursor: String? { get set }
}

/// A list method's reply: where the next page starts (nil: this was the last).
protocol PagedReply {
    var nextCursor: String? { get }
}

extension InventoryAPI.ListDevices.Parameters: PagedParameters {}
extension InventoryAPI.ListDevices.Reply: PagedReply {}
extension InventoryAPI.DeviceLog.Parameters: PagedParameters {}
extension InventoryAPI.DeviceLog.Reply: PagedReply {}
extension InventoryAPI.ListUsers.Parameters: PagedParameters {}
extension InventoryAPI.ListUsers.Reply: PagedReply {}
extension InventoryAPI.ListBadges.Reply: PagedReply {}
extension UserPageParameters: PagedParameters {}
extension LendingAPI.ListBookings.Parameters: PagedParameters {}
extension LendingAPI.ListBookings.Reply: PagedReply {}
extension LendingAPI.ListOverdue.Parameters: PagedParameters {}
extension LendingAPI.History.Parameters: PagedParameters {}
extension LendingAPI.RentalPage: PagedReply {}

/// Fetches every page of a paged list method (`limit`/`cursor` → `nextCursor`).
func allPages<M: VarlinkMethod, Item>(_ client: VarlinkClient, _ method: M.Type, _ parameters: M.Parameters,
                                      _ items: KeyPath<M.Reply, [Item]>, pageSize: Int = 500) async throws -> [Listed<Item>]
    where M.Parameters: PagedParameters, M.Reply: PagedReply {
    var all: [Listed<Item>] = []
    var p = parameters
    p.limit = pageSize
    while true {
        let page = try await call(client, method, p)
        all += page.listed(items)
        guard let next = page.value.nextCursor else { return all }
        p.cursor = next
    }
}

/// Prints `items` one JSON object per line as sent, or as a table of their typed values.
func printList<Item>(_ items: [Listed<Item>], json: Bool, empty: String, headers: [String], row: (Item) -> [String]) {
    if json {
        for item in items { emit(item.sent.serialized()) }
    } else if items.isEmpty {
        emit(empty)
    } else {
        emit(Table.render(headers, items.map { row($0.value) }))
    }
}
