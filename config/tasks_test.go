package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The [tasks] tables: none by default, an empty [tasks.taskwarrior] turns
// Taskwarrior on, [tasks.caldav] takes url, username and password_file,
// and a bad source is a problem at its own key's line that leaves the
// other source on.
func TestTasks(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	for _, tt := range []struct {
		name     string
		file     string
		want     Tasks
		problems []want
	}{
		{name: "none by default", file: "quiet = true\n"},
		{name: "an empty taskwarrior table turns it on", file: "[tasks.taskwarrior]\n",
			want: Tasks{Taskwarrior: &Taskwarrior{}}},
		{name: "taskwarrior with a command", file: "[tasks.taskwarrior]\ncommand = \"~/bin/task\"\n",
			want: Tasks{Taskwarrior: &Taskwarrior{Command: filepath.Join(home, "bin/task")}}},
		{name: "a bare command is looked up in PATH", file: "tasks.taskwarrior.command = \"task3\"\n",
			want: Tasks{Taskwarrior: &Taskwarrior{Command: "task3"}}},
		{name: "caldav", file: "[tasks.caldav]\nurl = \"https://dav.example.org/me/tasks/\"\nusername = \"me\"\npassword_file = \"~/.config/antidrift/caldav-password\"\n",
			want: Tasks{CalDAV: &CalDAV{URL: "https://dav.example.org/me/tasks/", Username: "me", PasswordFile: filepath.Join(home, ".config/antidrift/caldav-password")}}},
		{name: "both", file: "[tasks.taskwarrior]\n[tasks.caldav]\nurl = \"http://127.0.0.1:5232/me/tasks/\"\n",
			want: Tasks{Taskwarrior: &Taskwarrior{}, CalDAV: &CalDAV{URL: "http://127.0.0.1:5232/me/tasks/"}}},
		{name: "a typo in caldav is at its line and leaves taskwarrior on",
			file:     "[tasks.taskwarrior]\n\n[tasks.caldav]\nurl = \"https://dav.example.org/t/\"\npasword_file = \"/x\"\n",
			want:     Tasks{Taskwarrior: &Taskwarrior{}},
			problems: []want{{"tasks", 5, "caldav: pasword_file: unknown key (the keys are url, username, password_file)"}}},
		{name: "a password in the url is refused",
			file:     "[tasks.caldav]\nurl = \"https://me:secret@dav.example.org/t/\"\n",
			problems: []want{{"tasks", 2, "caldav: url: holds a user name or password"}}},
		{name: "a password in the file is refused",
			file:     "[tasks.caldav]\nurl = \"https://d.example.org/t/\"\npassword = \"hunter2\"\n",
			problems: []want{{"tasks", 3, "caldav: password: a password never goes in config.toml"}}},
		{name: "a url that is not one",
			file:     "[tasks.caldav]\nurl = \"dav.example.org\"\n",
			problems: []want{{"tasks", 2, `caldav: url: "dav.example.org" is not an http or https URL`}}},
		{name: "caldav without a url",
			file:     "[tasks.caldav]\nusername = \"me\"\n",
			problems: []want{{"tasks", 1, "caldav: has no url"}}},
		{name: "a relative password file",
			file:     "[tasks.caldav]\nurl = \"https://d.example.org/t/\"\npassword_file = \"pw\"\n",
			problems: []want{{"tasks", 3, `caldav: password_file: "pw" is not an absolute path`}}},
		{name: "an unknown source",
			file:     "[tasks.todoist]\ntoken = \"x\"\n",
			problems: []want{{"tasks", 1, "todoist: unknown table (the task sources are taskwarrior, caldav)"}}},
		{name: "an empty command",
			file:     "[tasks.taskwarrior]\ncommand = \"\"\n",
			problems: []want{{"tasks", 2, `taskwarrior: command: is empty; leave command out to run "task"`}}},
		{name: "tasks as a string",
			file:     "tasks = \"taskwarrior\"\n",
			problems: []want{{"tasks", 1, `want a table ([tasks.taskwarrior] or [tasks.caldav]), got the string "taskwarrior"`}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			got, problems := Parse(path, []byte(tt.file))
			if !reflect.DeepEqual(got.Tasks, tt.want) {
				t.Errorf("Tasks = %s, want %s", show(got.Tasks), show(tt.want))
			}
			checkProblems(t, path, problems, tt.problems)
		})
	}
}

func show(t Tasks) string {
	var b strings.Builder
	if t.Taskwarrior != nil {
		b.WriteString("taskwarrior{" + t.Taskwarrior.Command + "} ")
	}
	if t.CalDAV != nil {
		b.WriteString("caldav{" + t.CalDAV.URL + " " + t.CalDAV.Username + " " + t.CalDAV.PasswordFile + "}")
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}
