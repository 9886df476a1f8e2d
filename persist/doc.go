// Package persist is antidrift's durable memory: files under
// $XDG_STATE_HOME/antidrift that implement service.Store.
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
package persist
