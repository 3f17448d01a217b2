/// The IDL of a rental, shared by `io.roombridge.Inventory` and `io.roombridge.Lending`
/// (Varlink interfaces cannot refer to each other's types; the text is one).
enum RentalTypeIDL {
    static let text = """
        # One lend..return period; device and user facts are copies kept after deletion.
        # lentBy and returnedBy: who lent and who returned it — a user ID (the badge tapped, or
        # the user a client named), unix:NAME (a client's Unix user), or web:NAME via unix:USER
        # (a person signed in to a trusted front end); absent when unknown. returnNote: the
        # device's condition noted at the return.
        type Rental (
          id: int,
          deviceId: string,
          model: string,
          osVersion: string,
          serialNumber: string,
          userId: string,
          userName: string,
          rentedAt: string,
          dueAt: ?string,
          returnedAt: ?string,
          returnedBy: ?string,
          location: ?string,
          returnLocation: ?string,
          lentBy: ?string,
          returnNote: ?string,
          overdue: bool
        )
        """
}
