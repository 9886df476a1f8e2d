// Package persist is antidrift's durable memory: files under
// $XDG_STATE_HOME/antidrift that implement service.Store, and this
// machine's copy of its sealed record in sync_dir, beside the other
// machines' copies it reads there.
//
//	state.json              latest-wins snapshot of the core (atomic replace)
//	sessions/<id>.jsonl     raw focus events of one session (append + fsync)
//	audit.jsonl             hash-chained summaries of ended sessions (append + fsync)
//	pending.spare           pending summaries when state.json cannot be saved (pendingspare.go)
//
// Every file and line carries a format version, and a directory holding a
// later version than this build knows is refused before anything in it
// changes (version.go).
//
// Every write is either atomic (temp file, fsync, rename, directory fsync) or
// an fsynced append, so a crash leaves either the old bytes or the new ones.
// Damaged files are set aside under a new name and reported, never deleted:
// they may be the only copy of what happened. Window titles are private, so
// the directory is 0700 and every file 0600. Nothing in it is followed
// through a symbolic link, and a directory another user owns or may write
// in is refused (nofollow.go; docs/state-directory.md).
//
// sync_dir (docs/sync.md) is the files named sync_*.go: its layout
// (sync_layout.go), this machine's signing key (sync_devicekey.go) and
// signature layer (sync_signed.go), the publisher that writes this
// machine's folder after each seal (sync_publish.go), the reading of the
// other machines' folders (sync_shared.go, sync_sharedwalk.go) within
// bounds (sync_bounds.go, sync_numbers.go), the keys pinned for them
// (sync_keys.go) and the furthest head seen of each (sync_seen.go).
// They stay in this package: they write through the same atomic,
// no-follow, versioned file handling as the state directory, and the
// pins and heads they keep live in it. Syncthing moves the files; nothing
// here syncs.
package persist
