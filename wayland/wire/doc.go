// Package wire speaks the Wayland wire protocol, the little of it antidrift
// needs: framing messages and reading and writing their arguments. No Go
// Wayland library is available to this module, and the protocol is small
// enough that owning it costs less than a dependency would.
//
// A message is an 8-byte header — the object id (u32), then size<<16|opcode
// (u32), in host byte order — followed by its arguments, each padded to 4
// bytes. This package knows nothing about interfaces or objects: the caller
// says which arguments a message has, in order, as the protocol XML does.
//
// File descriptor arguments travel beside the bytes (SCM_RIGHTS), not in
// them. None of the requests and events antidrift uses carries one, so this
// package neither sends nor receives descriptors; one a compositor sends
// anyway is closed by the kernel, because the socket is read without room
// for ancillary data.
package wire
