import Varlink

/// Decides who may call methods that change things: root, and members of one group.
///
/// Everyone who can open the socket may read (`GetState`, `Watch`); the socket file's mode and
/// group decide who can open it.
public struct Authorizer: Sendable {
    /// The group's name, used in the error that tells a refused caller what to join.
    public let groupName: String
    /// The group's id; nil when the group does not exist on this system (then only root may).
    public let gid: UInt32?

    public init(groupName: String, gid: UInt32?) {
        self.groupName = groupName
        self.gid = gid
    }

    /// True when the peer is root or in the group (primary or supplementary).
    public func allows(_ peer: PeerCredentials?) -> Bool {
        guard let peer else { return false }
        if peer.uid == 0 { return true }
        guard let gid else { return false }
        return peer.gid == gid || peer.groups.contains(gid)
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
