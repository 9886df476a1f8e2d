package service

import "fmt"

// ErrorKind names why the core refused or failed a call. dbusapi maps each
// kind to an org.antidrift.Error.* name.
type ErrorKind int

const (
	// NotPermitted: the state or enforcement level refuses the call. The
	// message says so, that retrying will not help, and what works now.
	NotPermitted ErrorKind = iota + 1
	// InvalidArgument: an argument broke a rule; the message names both.
	InvalidArgument
	// Storage: the disk failed a read the caller asked for.
	Storage
)

func (k ErrorKind) String() string {
	switch k {
	case NotPermitted:
		return "NotPermitted"
	case InvalidArgument:
		return "InvalidArgument"
	case Storage:
		return "Storage"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a refusal or failure with a message written for a person.
type Error struct {
	Kind ErrorKind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func invalid(format string, args ...any) *Error {
	return &Error{Kind: InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}
