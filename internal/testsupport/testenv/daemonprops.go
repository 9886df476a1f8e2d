package testenv

import (
	"encoding/json"
	"fmt"
	"strings"
)

// BusctlGetProperty is the command that reads the daemon's property name
// as JSON, for a test whose own connection the daemon would not serve: a
// daemon running as the GNOME Shell's user, or inside a machine whose
// user bus the host cannot join. Run it there, and decode what it prints
// with DecodeBusctlProperty.
func BusctlGetProperty(name string) []string {
	return []string{"busctl", "--user", "--json=short", "get-property", sessionName, sessionPath, sessionIface, name}
}

// DecodeBusctlProperty decodes what BusctlGetProperty printed for
// property name ({"type":"s","data":"away"}) into a T, so the test
// compares Go values, as it would with a Session.
func DecodeBusctlProperty[T any](name, out string) (T, error) {
	var reply struct {
		Data T `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil {
		return reply.Data, fmt.Errorf("%s as busctl gave it, %q, is not a %T: %v", name, strings.TrimSpace(out), reply.Data, err)
	}
	return reply.Data, nil
}
