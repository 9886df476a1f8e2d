// Package installed tests antidrift as people run it: installed from its
// Debian package (make package) by apt into a Debian 13 system booted with
// a real systemd (testenv.Machine), where the user's manager and session bus
// start, supervise, sandbox and log the daemon. Its files are tests only.
package installed
