package config

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// Tasks is the [tasks] table: the task managers antidrift offers tasks
// from. None by default; a table present turns its source on.
type Tasks struct {
	Taskwarrior *Taskwarrior // [tasks.taskwarrior]; nil: off
	CalDAV      *CalDAV      // [tasks.caldav]; nil: off
}

// Taskwarrior is [tasks.taskwarrior]: an empty table turns it on.
type Taskwarrior struct {
	// Command is command: the task binary, a name looked up in PATH or an
	// absolute path; "" means "task".
	Command string
}

// CalDAV is [tasks.caldav]: one task collection on a CalDAV server.
type CalDAV struct {
	URL      string // url: the task collection
	Username string // username
	// PasswordFile is password_file: a 0600 file holding the password
	// (absolute, ~/ expanded); "" means the Secret Service is asked.
	PasswordFile string
}

// taskKeys are the tables of [tasks]; taskwarriorKeys and caldavKeys
// theirs.
var (
	taskKeys        = []string{"taskwarrior", "caldav"}
	taskwarriorKeys = []string{"command"}
	caldavKeys      = []string{"url", "username", "password_file"}
)

// tasks is the [tasks] table. Each source's table is taken whole or not at
// all (a source half configured would talk to the wrong place); one bad
// source leaves the other on.
func tasks(c *Config, v any) error {
	table, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a table ([tasks.taskwarrior] or [tasks.caldav]), got %s", describe(v))
	}
	var first error
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var err error
		switch k {
		case "taskwarrior":
			var tw *Taskwarrior
			if tw, err = taskwarrior(table[k]); err == nil {
				c.Tasks.Taskwarrior = tw
			}
		case "caldav":
			var cd *CalDAV
			if cd, err = caldav(table[k]); err == nil {
				c.Tasks.CalDAV = cd
			}
		default:
			err = fmt.Errorf("unknown table (the task sources are %s)", strings.Join(taskKeys, ", "))
		}
		if err != nil && first == nil {
			first = &keyError{key: k, err: err}
		}
	}
	return first
}

func taskwarrior(v any) (*Taskwarrior, error) {
	table, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a table (an empty [tasks.taskwarrior] turns it on; optional command), got %s", describe(v))
	}
	tw := &Taskwarrior{}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var err error
		switch k {
		case "command":
			tw.Command, err = command(table[k])
		default:
			err = fmt.Errorf("unknown key (the keys are %s)", strings.Join(taskwarriorKeys, ", "))
		}
		if err != nil {
			return nil, &keyError{key: k, err: err}
		}
	}
	return tw, nil
}

// command is the task binary: a bare name (looked up in PATH when run) or
// an absolute path, ~/ expanded.
func command(v any) (string, error) {
	s, err := text(v, `a quoted program such as "task" or "/usr/local/bin/task"`)
	if err != nil {
		return "", err
	}
	switch {
	case strings.TrimSpace(s) == "":
		return "", fmt.Errorf(`is empty; leave command out to run "task"`)
	case strings.ContainsRune(s, 0):
		return "", fmt.Errorf("%s holds a NUL character", service.Quote(s))
	case !strings.ContainsRune(s, '/'):
		return s, nil
	}
	path, err := homePath(s)
	if err != nil {
		return "", err
	}
	return path, nil
}

func caldav(v any) (*CalDAV, error) {
	table, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a table ([tasks.caldav] with url, username, password_file), got %s", describe(v))
	}
	cd := &CalDAV{}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var err error
		switch k {
		case "url":
			cd.URL, err = collectionURL(table[k])
		case "username":
			cd.Username, err = text(table[k], `a quoted user name such as "me"`)
		case "password_file":
			var s string
			if s, err = text(table[k], `a quoted file such as "~/.config/antidrift/caldav-password"`); err == nil {
				if s == "" {
					err = fmt.Errorf("is empty; leave password_file out to ask the Secret Service")
				} else {
					cd.PasswordFile, err = homePath(s)
				}
			}
		case "password":
			err = fmt.Errorf("a password never goes in config.toml: put it in a 0600 file named by password_file, or in the Secret Service with `secret-tool store --label=antidrift service antidrift url URL username NAME`")
		default:
			err = fmt.Errorf("unknown key (the keys are %s)", strings.Join(caldavKeys, ", "))
		}
		if err != nil {
			return nil, &keyError{key: k, err: err}
		}
	}
	if cd.URL == "" {
		return nil, fmt.Errorf("has no url (the task collection, such as \"https://dav.example.org/me/tasks/\")")
	}
	return cd, nil
}

// collectionURL is an http or https URL with a host; whether plain http is
// allowed (loopback only) is the CalDAV source's rule, checked where it is
// made.
func collectionURL(v any) (string, error) {
	s, err := text(v, `a quoted URL such as "https://dav.example.org/me/tasks/"`)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%s is not an http or https URL of a task collection", service.Quote(s))
	}
	if u.User != nil {
		return "", fmt.Errorf("holds a user name or password; put the user name in username and the password in password_file or the Secret Service")
	}
	return s, nil
}

// homePath is s as an absolute path, a leading ~/ expanded.
func homePath(s string) (string, error) {
	path := s
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s starts with ~/ but there is no home directory to expand it to (%v)", service.Quote(s), err)
		}
		path = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(path) || strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("%s is not an absolute path (use a full path, or one starting with ~/)", service.Quote(s))
	}
	return filepath.Clean(path), nil
}
