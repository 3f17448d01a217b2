import ArgumentParser
import Foundation
import Varlink
import VarlinkNIO
#if canImport(Glibc)
import Glibc
#endif

/// Runs the Varlink project's conformance test (`org.varlink.certification`) against this
/// project's Varlink library, in either direction; a test tool, not shipped in the package.
@main
struct VarlinkCert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "varlink-cert",
        abstract: "The org.varlink.certification conformance test, on RoomBridge's Varlink server and client.",
        discussion: """
        Check the server with another implementation's client, e.g.
          varlink-cert serve --socket /tmp/cert.sock &
          varlink-go-certification -client -varlink unix:/tmp/cert.sock
        and the client against another implementation's server:
          varlink-go-certification -varlink unix:/tmp/cert.sock &
          varlink-cert client --socket /tmp/cert.sock
        """,
        subcommands: [Serve.self, Client.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve org.varlink.certification on a Unix socket until terminated.")

    @Option(help: "Path of the Unix socket to listen on.")
    var socket: String

    func run() async throws {
        let service = try VarlinkService(
            vendor: "RoomBridge", product: "varlink-cert", version: "1", url: "https://varlink.org",
            interfaces: [CertificationService()])
        let server = try await VarlinkServer.bind(
            service: service, configuration: VarlinkServerConfiguration(listen: .path(socket, mode: 0o600)))
        print("listening on \(socket)")
        fflush(nil)
        try await server.run()
    }
}

struct Client: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the certification client against a server; exits 0 when every step passed.")

    @Option(help: "Path of the server's Unix socket.")
    var socket: String

    func run() async throws {
        let client = try await VarlinkClient.connect(path: socket)
        do {
            try await CertificationClient(client: client) { print($0) }.run()
            await client.close()
        } catch let failure as CertificationFailure {
            printError("certification failed: \(failure)")
            throw ExitCode.failure
        }
        print("certification passed")
    }
}

private func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
