package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"

	"github.com/godbus/dbus/v5"
)

// waitChange is status --wait-change DIGEST, for panels that can only run a
// command to completion (Plasma's executable data engine cannot read a
// --follow stream): it prints the status as JSON, with its "digest", as
// soon as that digest differs from the one given, and exits. Run again with
// the digest it printed, it sleeps on the bus until the next change, so a
// panel follows the daemon without polling and without missing a change
// that happens between two runs. Any digest that is not current ("none",
// "") prints at once.
func waitChange(ctx context.Context, c *client, digest string, w io.Writer) error {
	sigs, err := watchDaemon(c)
	if err != nil {
		return err
	}
	for {
		st, err := readStatus(c)
		if err != nil {
			return err
		}
		c.flags = dbus.FlagNoAutoStart // only the first read may activate the daemon
		obj := statusObject(st)
		if d := statusDigest(obj); d != digest {
			obj["digest"] = d
			writeJSON(w, obj)
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-sigs:
			if err := drain(sigs, ok); err != nil {
				return err
			}
		}
	}
}

// statusObject is the JSON object of status --format json.
func statusObject(s *status) map[string]any {
	if s == nil {
		return map[string]any{"state": "offline"}
	}
	return s.jsonObject()
}

// liveKeys change at every read while a session runs (the current window's
// time is counted up to the moment of reading), so they are left out of the
// digest: a digest that moved with the clock would wake a panel every time.
var liveKeys = []string{"buckets", "switch_count"}

// statusDigest identifies what a status says, but for its live numbers.
func statusDigest(obj map[string]any) string {
	stable := maps.Clone(obj)
	for _, k := range liveKeys {
		delete(stable, k)
	}
	h := sha256.New()
	writeJSON(h, stable)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
