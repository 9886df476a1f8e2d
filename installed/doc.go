// Package installed tests antidrift as people run it: installed from its
// Debian package (make package) by apt into a Debian 13 system booted with
// a real systemd (testenv.Machine), where the user's manager and session bus
// start, supervise, sandbox and log the daemon; and the Fedora and Arch
// packages (make rpm, make arch) built from the same tree, offline, with the
// .deb's files. Its files are tests only.
package installed
