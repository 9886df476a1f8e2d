package statefixture

import (
	"errors"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// Machine is another of the person's machines, as sync_dir shows it: the
// sessions seal into a state directory of its own at stateDir, and its
// publisher writes its copy into syncDir under the label name, as its
// daemon would after each seal. It returns the machine's device id. No
// Syncthing is needed: this is what Syncthing would have brought.
func Machine(stateDir, syncDir, name string, titles bool, sessions ...service.Summary) (deviceID string, err error) {
	st, _, err := persist.Open(stateDir)
	if err != nil {
		return "", err
	}
	defer st.Close()
	for _, s := range sessions {
		if _, err := st.AppendAudit(s); err != nil {
			return "", err
		}
	}
	id, problem, err := st.DeviceID()
	if err != nil {
		return "", err
	}
	if problem == "" {
		problem = persist.NewPublisher(st, syncDir, id, name, titles, func(string) {}).PublishNow()
	}
	if problem != "" {
		return "", errors.New(problem)
	}
	return id, nil
}
