// Package dist holds the files antidrift installs into the system (the
// D-Bus interface description, the systemd unit, the activation file) and
// embeds the interface XML so the daemon serves exactly what is installed.
package dist

import _ "embed"

// InterfaceXML is the introspection data of org.antidrift.Session1, as
// installed to share/dbus-1/interfaces/.
//
//go:embed org.antidrift.Session1.xml
var InterfaceXML string
