import Lending
import Varlink

/// Decides who may call methods that change things: root, and members of one group; and who a
/// caller is, for the records of who changed what.
///
/// Everyone who can open the socket may read (`GetState`, `Watch`); the socket file's mode and
/// group decide who can open it.
public struct Authorizer: Sendable {
    /// The group's name, used in the error that tells a refused caller what to join.
    public let groupName: String
    /// The group's id; nil when the group does not exist on this system (then only root may).
    public let gid: UInt32?
    /// Unix users who may name the person they act for (the `actor` parameter), besides root:
    /// front ends with their own sign-in, such as roombridge-web.
    public let actorUsers: Set<String>
    /// The name of a Unix user ID (the daemon looks it up in the user database); nil: unknown.
    private let userName: @Sendable (UInt32) -> String?

    public init(groupName: String, gid: UInt32?, actorUsers: Set<String> = ["roombridge-web"],
                userName: @escaping @Sendable (UInt32) -> String? = { _ in nil }) {
        self.groupName = groupName
        self.gid = gid
        self.actorUsers = actorUsers
        self.userName = userName
    }

    /// Who is acting in a call: the peer's Unix user (from `SO_PEERCRED`), or — when a trusted
    /// front end passes `named` — the person signed in there, on whose behalf it calls.
    /// Nil when the transport gives no credentials.
    /// - Throws: ``LendingError/invalidField(_:reason:)`` (`actor`) when a caller that is neither
    ///   root nor one of ``actorUsers`` names someone, or the name is not acceptable.
    public func actor(_ context: VarlinkCallContext, named: String?) throws(LendingError) -> ChangeActor? {
        guard let peer = context.peer else {
            if named != nil { throw .invalidField("actor", reason: "the connection has no peer credentials to vouch for it") }
            return nil
        }
        let unixName = userName(peer.uid) ?? String(peer.uid)
        guard let named else { return .unixUser(unixName) }
        guard peer.uid == 0 || actorUsers.contains(unixName) else {
            let trusted = actorUsers.sorted().joined(separator: ", ")
            throw .invalidField("actor", reason: "only root and the Unix users in auth.actor_users (\(trusted)) may name who they act for; unix:\(unixName) may not, so leave actor out")
        }
        return .signedIn(try ChangeActor.signedInName(named), via: unixName)
    }

    /// True when the peer is root or in the group (primary or supplementary).
    public func allows(_ peer: PeerCredentials?) -> Bool {
        guard let peer else { return false }
        if peer.uid == 0 { return true }
        guard let gid else { return false }
        return peer.isMember(ofGroup: gid)
    }

    /// Throws `io.roombridge.State.PermissionDenied` naming the group when the peer may not mutate.
    public func requireMutation(_ context: VarlinkCallContext) throws(VarlinkError) {
        guard allows(context.peer) else {
            let hint = gid == nil
                ? "the group \(groupName) does not exist; an administrator can create it (groupadd --system \(groupName)) or set auth.group"
                : "ask an administrator to run: usermod -aG \(groupName) <your user>, then log in again; or use sudo"
            throw VarlinkError("io.roombridge.State.PermissionDenied",
                               parameters: ["group": .string(groupName), "hint": .string(hint)])
        }
    }
}
