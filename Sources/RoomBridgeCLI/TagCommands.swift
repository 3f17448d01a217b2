import ArgumentParser
import Foundation
import RoomBridgeAPI
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
                    let reply = try await call(client, TagsAPI.GetLastTap.self)
                    guard let t = reply.value.tap else {
                        if options.json { emit("null") } else { emit("No tap yet.") }
                        return
                    }
                    if options.json { emit(reply.sole.serialized()); return }
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
                    _ = try await call(client, InventoryAPI.GetDevice.self, .init(id: deviceId))
                    if !options.json {
                        Output.err("Place a writable tag on the reader for \(deviceId) (within \(timeout) s)…\n")
                    }
                    let params = TagsAPI.Write.Parameters(deviceId: deviceId, uri: uri, lock: lock, force: force, timeoutSeconds: timeout)
                    do {
                        // Not through call(_:_:_:): the interface's own errors say why the write failed.
                        let sent = try await client.call(TagsAPI.Write.name, parameters: try JSONValueEncoder().encodeObject(params))
                        if options.json { emit(JSONValue.object(sent).serialized()); return }
                        let r = try Answer<TagsAPI.Write>(sent).value
                        emit("Tag \(r.uid) (\(r.tagType)) registered for \(deviceId)"
                             + (r.formatted ? ", formatted" : "") + (r.locked ? ", locked read-only" : "") + ".")
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
                    let r = try await call(client, TagsAPI.CancelWrite.self)
                    emit(options.json ? JSONValue.object(r.sent).serialized()
                         : (r.value.cancelled ? "Cancelled." : "No tag write was waiting."))
                }
            }
        }
    }
}
