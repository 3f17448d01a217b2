import ArgumentParser
import Foundation
import RoomBridgeCore
import Varlink
import VarlinkNIO

extension RoomBridgeCtl {
    /// `roombridgectl tags …` and `roombridgectl tag …`: the last tap; registering device tags.
    struct Tags: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tag",
            abstract: "NFC tags: the last tap, writing device tags at registration, UID bindings.",
            subcommands: [Last.self, Write.self, Cancel.self, TagBindings.Bind.self, TagBindings.Unbind.self, TagBindings.List.self],
            aliases: ["tags"])

        struct Last: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show the most recent tap on any reader.")
            @OptionGroup var options: GlobalOptions

            func run() async throws {
                try await withClient(options) { client in
                    let reply = try await call(client, "io.roombridge.Tags.GetLastTap")
                    guard let tap = reply["tap"] else {
                        if options.json { emit("null") } else { emit("No tap yet.") }
                        return
                    }
                    if options.json { emit(tap.serialized()); return }
                    let t = try decode(Tap.self, tap)
                    emit(Render.describe(t))
                    for r in t.records {
                        emit("  record \(r.tnf) \(r.type)" + (r.uri.map { " \($0)" } ?? r.text.map { " \"\($0)\"" } ?? ""))
                    }
                }
            }
        }

        struct Write: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Write a device tag: place a tag on the reader after running this.",
                discussion: """
                    The next NTAG213/215/216 placed on a reader gets the device record (after a URI \
                    record with --uri), is read back and compared, and its UID is bound to the \
                    device, which is then marked NFC registered. --lock makes the tag read-only: \
                    irreversible.
                    """)
            @OptionGroup var options: GlobalOptions
            @Argument(help: "Device ID, e.g. D-0001.") var deviceId: String
            @Option(help: "A URI record to write first (phones open it).") var uri: String?
            @Flag(help: "Make the tag read-only afterwards (irreversible).") var lock = false
            @Flag(help: "Re-register a tag that is bound to another device.") var force = false
            @Option(help: "Seconds to wait for a tag.") var timeout = 60

            func run() async throws {
                try await withClient(options) { client in
                    // Say at once that the device does not exist, rather than after a tag was placed.
                    _ = try await call(client, "io.roombridge.Inventory.GetDevice", ["id": .string(deviceId)])
                    if !options.json {
                        Output.err("Place a writable tag on the reader for \(deviceId) (within \(timeout) s)…\n")
                    }
                    var params: [String: JSONValue] = ["deviceId": .string(deviceId), "lock": .bool(lock),
                                                       "force": .bool(force), "timeoutSeconds": .int(Int64(timeout))]
                    if let uri { params["uri"] = .string(uri) }
                    do {
                        let r = try await client.call("io.roombridge.Tags.Write", parameters: params)
                        if options.json { emit(JSONValue.object(r).serialized()); return }
                        let uid = r["uid"]?.stringValue ?? "?"
                        emit("Tag \(uid) (\(r["tagType"]?.stringValue ?? "?")) registered for \(deviceId)"
                             + (r["formatted"]?.boolValue == true ? ", formatted" : "")
                             + (r["locked"]?.boolValue == true ? ", locked read-only" : "") + ".")
                    } catch let error as VarlinkError where error.name.hasPrefix("io.roombridge.Tags.") {
                        throw CtlError(exit: .refused, message: "tag write for \(deviceId) failed: \(error.parameters["message"]?.stringValue ?? error.name)")
                    } catch let error as VarlinkError {
                        throw translate(error)
                    }
                }
            }
        }

        struct Cancel: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Cancel a tag write that is waiting for a tag.")
            @OptionGroup var options: GlobalOptions

            func run() async throws {
                try await withClient(options) { client in
                    let r = try await call(client, "io.roombridge.Tags.CancelWrite")
                    emit(options.json ? JSONValue.object(r).serialized()
                         : (r["cancelled"]?.boolValue == true ? "Cancelled." : "No tag write was waiting."))
                }
            }
        }
    }
}
