// Package service is antidrift's decision core: the session state machine,
// the commitment, evidence accounting, drift verdicts, the nudges and the
// enforcement policy, and the permission table.
//
// It imports no D-Bus, no X11 and no Wayland, and nothing else of ours. It
// talks to the world through the small ports in ports.go (Store, Guard,
// Notifier, Clock, Judge, Reporter) and takes evidence as Windows, under
// the contract in evidence.go; so every decision here is a fast unit test
// with a fake clock and fake ports. The adapters (persist, dbusapi, the
// evidence sources, ...) import this package for its types; this package
// imports none of them.
package service
