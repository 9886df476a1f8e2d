package kwin

import "regexp"

// handlePattern is what KWin's internalId looks like as a string: a UUID in
// braces. A handle comes back from KWin through the core, but the guard
// puts it into script text that KWin runs, so only this shape gets there.
var handlePattern = regexp.MustCompile(`^\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}$`)

func validHandle(h string) bool { return handlePattern.MatchString(h) }
