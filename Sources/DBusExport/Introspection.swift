// Introspection XML in the format of the D-Bus specification ("Introspection Data Format"),
// as produced by libdbus-based services such as bluetoothd (gdbus/object.c).

import DBus

extension ObjectRegistry {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    static let standardXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>

        """

    static let propertiesXML = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="props" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
          </interface>

        """

    static let objectManagerXML = """
          <interface name="org.freedesktop.DBus.ObjectManager">
            <method name="GetManagedObjects">
              <arg name="objects" type="a{oa{sa{sv}}}" direction="out"/>
            </method>
            <signal name="InterfacesAdded">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="a{sa{sv}}"/>
            </signal>
            <signal name="InterfacesRemoved">
              <arg name="object" type="o"/>
              <arg name="interfaces" type="as"/>
            </signal>
          </interface>

        """

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }

    static func xml(_ i: DBusInterface) -> String {
        var x = "  <interface name=\"\(i.name)\">\n"
        for m in i.methods {
            if m.inArguments.isEmpty, m.outArguments.isEmpty {
                x += "    <method name=\"\(m.name)\"/>\n"
                continue
            }
            x += "    <method name=\"\(m.name)\">\n"
            for a in m.inArguments { x += "      <arg name=\"\(escape(a.name))\" type=\"\(escape(a.signature.rawValue))\" direction=\"in\"/>\n" }
            for a in m.outArguments { x += "      <arg name=\"\(escape(a.name))\" type=\"\(escape(a.signature.rawValue))\" direction=\"out\"/>\n" }
            x += "    </method>\n"
        }
        for s in i.signals {
            if s.arguments.isEmpty {
                x += "    <signal name=\"\(s.name)\"/>\n"
                continue
            }
            x += "    <signal name=\"\(s.name)\">\n"
            for a in s.arguments { x += "      <arg name=\"\(escape(a.name))\" type=\"\(escape(a.signature.rawValue))\"/>\n" }
            x += "    </signal>\n"
        }
        for p in i.properties {
            let type = escape(p.signature.rawValue)
            if p.changeSignal == .emits {
                x += "    <property name=\"\(p.name)\" type=\"\(type)\" access=\"\(p.access.rawValue)\"/>\n"
            } else {
                x += "    <property name=\"\(p.name)\" type=\"\(type)\" access=\"\(p.access.rawValue)\">\n"
                x += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"\(p.changeSignal.rawValue)\"/>\n"
                x += "    </property>\n"
            }
        }
        x += "  </interface>\n"
        return x
    }

    /// Introspection XML for `path`, or nil if nothing is exported at or below it.
    func introspect(_ path: DBusObjectPath) -> String? {
        state.withLock { s in
            let object = s.objects[path]
            let isManager = s.managers.contains(path)
            var children: Set<String> = []
            for p in Array(s.objects.keys) + Array(s.managers) where p.isDescendant(of: path) {
                let rest = p.rawValue.dropFirst(path.rawValue == "/" ? 1 : path.rawValue.count + 1)
                if let first = rest.split(separator: "/").first { children.insert(String(first)) }
            }
            guard object != nil || isManager || !children.isEmpty || path == .root else { return nil }
            var x = Self.doctype + "<node>\n" + Self.standardXML
            if object != nil { x += Self.propertiesXML }
            if isManager { x += Self.objectManagerXML }
            if let object {
                for name in object.order { x += Self.xml(object.interfaces[name]!.definition) }
            }
            for c in children.sorted() { x += "  <node name=\"\(c)\"/>\n" }
            x += "</node>\n"
            return x
        }
    }
}
