// Package dist holds the files antidrift installs into the system (the
// D-Bus interface description, the systemd unit, the activation file) and
// embeds the interface XML so the daemon serves exactly what is installed,
// and the KWin scripts the daemon loads into KWin itself.
package dist

import _ "embed"

// InterfaceXML is the introspection data of org.antidrift.Session1, as
// installed to share/dbus-1/interfaces/.
//
//go:embed org.antidrift.Session1.xml
var InterfaceXML string

// KWinFocusScript is the script antidriftd loads into KWin to learn which
// window has focus (the kwin evidence source).
//
//go:embed kwin/focus.js
var KWinFocusScript string

// KWinActScript is the template of the one-shot script that minimizes or
// activates one window in KWin; @WINDOW@, @ACTION@ and @TOKEN@ are filled in.
//
//go:embed kwin/act.js
var KWinActScript string
