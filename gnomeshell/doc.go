// Package gnomeshell is antidrift's evidence source on GNOME Shell (48, the version the extension lists and is tested on).
//
// Mutter offers Wayland clients neither foreign-toplevel nor scripting, so
// what antidrift needs lives in a Shell extension (dist/gnome-shell/
// antidrift@antidrift.github.io): it reports the focused window to
// org.antidrift.Evidence1.ReportFocus on the Shell's own bus connection, and
// exports the hands (org.antidrift.Shell1 on /org/antidrift/Shell) there.
// This package is the daemon's side of it:
//
//   - Sensor turns those reports into service.Windows, and says in words why
//     there are none: GNOME Shell gone, the extension not installed, not
//     enabled or broken (org.gnome.Shell.Extensions, followed by signal);
//   - Guard calls the extension's hands through the name org.gnome.Shell, so
//     the answer is the compositor's;
//   - IdleWatcher follows org.gnome.Mutter.IdleMonitor's watches.
//
// It imports the core's types, godbus and the small shared pieces under
// internal/ (busname, latest), never another source or dbusapi. Window
// titles are never logged above debug level.
package gnomeshell

// The bus names, paths and interfaces of GNOME Shell and the extension.
const (
	// ExtensionUUID names the extension; make install-user puts it under
	// this directory name.
	ExtensionUUID = "antidrift@antidrift.github.io"

	shellName       = "org.gnome.Shell"
	shellPath       = "/org/gnome/Shell"
	extensionsIface = "org.gnome.Shell.Extensions"
	propertiesIface = "org.freedesktop.DBus.Properties"

	userExtensionsEnabled = "UserExtensionsEnabled"

	handsPath  = "/org/antidrift/Shell"
	handsIface = "org.antidrift.Shell1"
)
