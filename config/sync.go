package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/antidrift/antidrift/service"
)

// maxDeviceName bounds device_name: a label a report shows beside every
// session, so a line's worth at most.
const maxDeviceName = 64

// syncDir is sync_dir: an absolute path, or one starting with ~/ (the
// home directory). A relative path would depend on where the daemon was
// started, and "" is what leaves sync off, so it is not written.
func syncDir(c *Config, v any) error {
	s, err := text(v, `a quoted folder such as "~/Sync/antidrift"`)
	if err != nil {
		return err
	}
	path := s
	if rest, ok := strings.CutPrefix(s, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return fmt.Errorf("%s starts with ~/ but there is no home directory to expand it to (%v)", service.Quote(s), err)
		}
		path = filepath.Join(home, rest)
	}
	switch {
	case s == "":
		return fmt.Errorf(`is empty; leave sync_dir out to keep this machine's record to itself`)
	case !filepath.IsAbs(path):
		return fmt.Errorf("%s is not an absolute path (use a full path, or one starting with ~/)", service.Quote(s))
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%s holds a NUL character", service.Quote(s))
	}
	c.SyncDir = filepath.Clean(path)
	return nil
}

// deviceName is device_name: 1 to maxDeviceName printable characters.
// Other machines show it as is, so control characters stay out of it.
func deviceName(c *Config, v any) error {
	s, err := text(v, `a quoted name such as "laptop"`)
	if err != nil {
		return err
	}
	switch n := utf8.RuneCountInString(s); {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("is empty; leave device_name out to use the hostname")
	case n > maxDeviceName:
		return fmt.Errorf("is %d characters long (at most %d)", n, maxDeviceName)
	case !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("%s holds a character that cannot be shown (a control character or invalid UTF-8)", service.Quote(s))
	}
	c.DeviceName = s
	return nil
}

// DeviceLabel is this machine's name in reports over many machines:
// device_name, else the hostname.
func (c Config) DeviceLabel() string {
	if c.DeviceName != "" {
		return c.DeviceName
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "this machine"
}
