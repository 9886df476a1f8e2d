module github.com/antidrift/antidrift

go 1.24

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/emersion/go-ical v0.0.0-20240127095438-fc1c9d8fb2b6
	github.com/emersion/go-webdav v0.6.0
	github.com/godbus/dbus/v5 v5.2.4
	github.com/google/uuid v1.6.0
	github.com/jezek/xgb v1.1.1
	golang.org/x/sys v0.27.0
)

require github.com/teambition/rrule-go v1.8.2 // indirect
