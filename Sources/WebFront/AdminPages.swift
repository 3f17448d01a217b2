import Foundation
import Lending
import RoomBridgeAPI
import Varlink

/// Who is looking at a page: nobody, a signed-in admin (`user`) or a signed-in self-service
/// account (`booker`), with the session's CSRF token.
struct Viewer: Sendable {
    /// The signed-in admin; nil for anyone else, a self-service account included.
    var user: String?
    var csrf: String?
    /// A self-service account: its sign-in name and the inventory user it books for.
    struct Booker: Sendable, Equatable {
        var name: String
        var userId: String
    }
    var booker: Booker?
    /// What the last change did, said once on the page after it.
    var notice: String?
    static let anonymous = Viewer()

    /// The signed-in name, admin or self-service.
    var signedIn: String? { user ?? booker?.name }

    /// The hidden field every form of a signed-in admin carries.
    var csrfField: String { "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf ?? ""))\">" }
}

/// The admin's forms: sign-in and adding and editing a device (through io.roombridge.Inventory).
struct AdminPages: Sendable {
    let link: DaemonLink

    func login(_ l: Localizer, csrf: String, next: String?, error: String?) -> String {
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        body += """
            <form method="post" action="/login" class="form">
            <input type="hidden" name="csrf" value="\(HTML.escape(csrf))">
            <input type="hidden" name="next" value="\(HTML.escape(next ?? "/devices"))">
            <label>\(HTML.escape(l.t("admin.name"))) <input name="name" id="name" autocomplete="username" required></label>
            <label>\(HTML.escape(l.t("admin.password"))) <input type="password" name="password" id="password" autocomplete="current-password" required></label>
            <button type="submit" id="sign-in">\(HTML.escape(l.t("admin.signIn")))</button>
            </form>
            """
        return HTML.page(l, title: l.t("admin.signIn"), active: "", viewer: .anonymous, body: body)
    }

    /// The device fields of a submitted form; absent (empty) fields stay unchanged, except the
    /// note, which an empty field clears when editing.
    /// - Throws: `InvalidParameter` `status` for a status the inventory does not have, as the daemon
    ///   answers a value outside the IDL's enum.
    static func fields(_ form: Query, editing: Bool) throws(VarlinkError) -> InventoryAPI.DeviceFields {
        var status: DeviceStatus?
        if let text = form["status"] {
            guard let value = DeviceStatus(rawValue: text) else { throw VarlinkError.invalidParameter("status") }
            status = value
        }
        return InventoryAPI.DeviceFields(
            groupId: form["groupId"], model: form["model"], serialNumber: form["serialNumber"], osVersion: form["osVersion"],
            status: status, connectorType: form["connectorType"], note: editing ? (form.raw("note") ?? nil) : form["note"])
    }

    /// Deletes a device that is not lent (its history and change log stay).
    func delete(_ id: String, actor: String?) async throws {
        _ = try await link.write(InventoryAPI.DeleteDevice.self, .init(id: id, actor: actor))
    }

    /// `actor`: the signed-in admin, recorded in the device's change log (the daemon trusts
    /// roombridge-web to name it).
    func add(_ form: Query, actor: String?) async throws -> String {
        let id = form["id"] ?? ""
        _ = try await link.write(InventoryAPI.AddDevice.self, .init(id: id, fields: try Self.fields(form, editing: false), actor: actor))
        return id
    }

    func update(_ id: String, _ form: Query, actor: String?) async throws {
        _ = try await link.write(InventoryAPI.UpdateDevice.self, .init(id: id, fields: try Self.fields(form, editing: true), actor: actor))
    }

    /// The add form (device nil) or the edit form, filled from `device` or from a refused `form`.
    func deviceForm(_ l: Localizer, viewer: Viewer, device: Device?, form: Query?, error: String?) async throws -> String {
        let groups = try await link.read(InventoryAPI.ListGroups.self, .init()).groups
        func value(_ key: String, _ current: String?) -> String { form?.raw(key) ?? current ?? "" }
        func input(_ key: String, _ label: String, _ current: String?, required: Bool = false) -> String {
            "<label>\(HTML.escape(l.t(label))) <input name=\"\(key)\" id=\"\(key)\" value=\"\(HTML.escape(value(key, current)))\"\(required ? " required" : "")></label>"
        }
        let action = device.map { "/devices/\(HTML.urlComponent($0.id))/edit" } ?? "/devices/new"
        var body = error.map { "<p class=\"error\" id=\"error\">\(HTML.escape($0))</p>" } ?? ""
        body += "<form method=\"post\" action=\"\(action)\" class=\"form\">" + viewer.csrfField
        if device == nil { body += input("id", "device.id", nil, required: true) }
        body += "<label>\(HTML.escape(l.t("devices.group"))) "
            + HTML.select("groupId", groups.map { ($0.id, $0.name) }, selected: value("groupId", device?.groupId)) + "</label>"
        body += input("model", "device.model", device?.model, required: device == nil)
        body += input("serialNumber", "device.serial", device?.serialNumber)
        body += input("osVersion", "device.os", device?.osVersion)
        body += input("connectorType", "device.connector", device?.connectorType)
        if device != nil {
            body += "<label>\(HTML.escape(l.t("devices.status"))) "
                + HTML.select("status", ["normal", "broken", "disposed"].map { ($0, l.t("status.\($0)")) }, selected: value("status", device?.status.rawValue))
                + "</label>"
        }
        body += input("note", "device.note", device?.note)
        body += "<button type=\"submit\" id=\"save\">\(HTML.escape(l.t("device.save")))</button></form>"
        let title = device.map { l.t("device.editTitle", ["id": $0.id]) } ?? l.t("device.add")
        return HTML.page(l, title: title, active: "devices", viewer: viewer, body: body)
    }
}
