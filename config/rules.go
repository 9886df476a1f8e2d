package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/antidrift/antidrift/service"
)

// The rules file: rules.toml beside config.toml, which antidrift owns and
// writes (antidrift review --apply), so the person's own config.toml, its
// comments and its layout, is never rewritten. docs/configuration.md says
// how the two combine:
//   - allowed_classes and distractions add to config.toml's;
//   - drift_grace and enforcement, when the rules file sets them, win over
//     config.toml's: they are the later choice, made by applying a proposal.

// RulesVersion is the rules file format this build reads and writes.
const RulesVersion = 1

// RulesName is the rules file's name, in config.toml's directory.
const RulesName = "rules.toml"

// RulesPath is the rules file that goes with the config file at
// configPath.
func RulesPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), RulesName)
}

// Rules is the rules file's contents.
type Rules struct {
	AllowedClasses []string
	Distractions   []string
	DriftGrace     time.Duration // with HasGrace
	HasGrace       bool
	Enforcement    service.Level // "" when unset
}

// rulesKeys are the keys of a rules file.
var rulesKeys = []string{"version", "allowed_classes", "distractions", "drift_grace", "enforcement"}

// LoadRules reads the rules file at path. A missing file is no rules. A key
// with a bad value is reported and left out, as in config.toml; a file that
// is not TOML, or of a newer version, is reported and not used.
func LoadRules(path string) (Rules, []Problem) {
	data, missing, p := readTOMLFile(path)
	if missing {
		return Rules{}, nil
	}
	if p != nil {
		return Rules{}, []Problem{*p}
	}
	return ParseRules(path, data)
}

// ParseRules is LoadRules on the file's contents.
func ParseRules(path string, data []byte) (Rules, []Problem) {
	values, md, p := decodeTOML(path, data)
	if p != nil {
		return Rules{}, []Problem{*p}
	}
	r := reporter{path: path, md: &md, values: values}
	if p, ok := values["version"]; ok {
		var v int64
		if err := md.PrimitiveDecode(p, &v); err != nil || v < 1 {
			return Rules{}, []Problem{{Path: path, Line: r.locate(p), Key: "version", Msg: "not a version this antidrift knows (want 1), so none of the file is used"}}
		} else if v > RulesVersion {
			return Rules{}, []Problem{{Path: path, Line: r.locate(p), Key: "version", Msg: fmt.Sprintf("version %d was written by a newer antidrift (this one reads %d), so none of the file is used", v, RulesVersion)}}
		}
	}
	c := Default()
	var out Rules
	for _, full := range topKeys(md) {
		key := full[0]
		if !slices.Contains(rulesKeys, key) {
			r.add(full, "unknown key (the keys are "+strings.Join(rulesKeys, ", ")+")")
			continue
		}
		if key == "version" {
			continue
		}
		var v any
		if err := md.PrimitiveDecode(values[key], &v); err != nil {
			r.add(full, err.Error())
			continue
		}
		if err := fields[key](&c, v); err != nil {
			r.add(full, err.Error())
			continue
		}
		switch key {
		case "allowed_classes":
			out.AllowedClasses = c.AllowedClasses
		case "distractions":
			out.Distractions = c.Distractions
		case "drift_grace":
			out.DriftGrace, out.HasGrace = c.DriftGrace, true
		case "enforcement":
			out.Enforcement = c.Enforcement
		}
	}
	return out, r.done()
}

// WithRules is c with the rules file's rules: lists added (case-insensitive
// duplicates dropped, at most maxClasses entries each), drift_grace and
// enforcement taken from the rules file when it sets them.
func (c Config) WithRules(r Rules) Config {
	c.AllowedClasses = addRules(c.AllowedClasses, r.AllowedClasses)
	c.Distractions = addRules(c.Distractions, r.Distractions)
	if r.HasGrace {
		c.DriftGrace = r.DriftGrace
	}
	if r.Enforcement != "" {
		c.Enforcement = r.Enforcement
	}
	return c
}

func addRules(to, more []string) []string {
	out := slices.Clone(to)
	for _, m := range more {
		if len(out) >= maxClasses {
			break
		}
		if !slices.ContainsFunc(out, func(x string) bool { return strings.EqualFold(x, m) }) {
			out = append(out, m)
		}
	}
	return out
}

// LoadWithRules is Load, then the rules file beside path (RulesPath) on top.
func LoadWithRules(path string) (Config, []Problem) {
	c, problems := Load(path)
	r, more := LoadRules(RulesPath(path))
	return c.WithRules(r), append(problems, more...)
}

// RulesFile writes the rules file: service.RulesFile for ApplyProposal.
type RulesFile struct{ Path string }

// rulesHeader heads every rules file written.
const rulesHeader = `# antidrift's rules file. antidrift review --apply writes it; you may edit or
# delete it. It is read beside config.toml: allowed_classes and distractions
# here are added to config.toml's; drift_grace and enforcement here, when set,
# win over config.toml's (docs/configuration.md).
`

// Apply adds p's change to the file, atomically. A file it cannot read as a
// rules file is never overwritten: the person's edits would be lost.
func (f RulesFile) Apply(p service.ReviewProposal) (string, error) {
	r, problems := LoadRules(f.Path)
	if len(problems) > 0 {
		return f.Path, fmt.Errorf("%s; fix or remove it, then apply again", problems[0].String())
	}
	full := func(key string, list []string) error {
		if len(list) >= maxClasses && !slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, p.Rule) }) {
			return fmt.Errorf("%s holds %d %s already, the most antidrift reads; remove some there, then apply again", f.Path, maxClasses, key)
		}
		return nil
	}
	switch p.Kind {
	case service.ProposeAllow:
		if err := full("allowed_classes", r.AllowedClasses); err != nil {
			return f.Path, err
		}
		r.AllowedClasses = addRules(r.AllowedClasses, []string{p.Rule})
	case service.ProposeDistraction:
		if err := full("distractions", r.Distractions); err != nil {
			return f.Path, err
		}
		r.Distractions = addRules(r.Distractions, []string{p.Rule})
	case service.ProposeGrace:
		r.DriftGrace, r.HasGrace = p.Grace, true
	case service.ProposeLevel:
		r.Enforcement = p.Level
	default:
		return f.Path, fmt.Errorf("a proposal of kind %q cannot be written", p.Kind)
	}
	data := encodeRules(r)
	// Never write what the next load refuses: a rule from a window's class
	// may hold what no rule can (a control character), and a rules file
	// that does not load blocks every later apply.
	if _, problems := ParseRules(f.Path, data); len(problems) > 0 {
		return f.Path, fmt.Errorf("the rule %s cannot be written to a rules file: %s", service.Quote(p.Rule), problems[0].Msg)
	}
	return f.Path, writeAtomic(f.Path, data)
}

func encodeRules(r Rules) []byte {
	out := struct {
		Version        int      `toml:"version"`
		AllowedClasses []string `toml:"allowed_classes,omitempty"`
		Distractions   []string `toml:"distractions,omitempty"`
		DriftGrace     string   `toml:"drift_grace,omitempty"`
		Enforcement    string   `toml:"enforcement,omitempty"`
	}{Version: RulesVersion, AllowedClasses: r.AllowedClasses, Distractions: r.Distractions, Enforcement: string(r.Enforcement)}
	if r.HasGrace {
		out.DriftGrace = r.DriftGrace.String()
	}
	var b bytes.Buffer
	b.WriteString(rulesHeader)
	if err := toml.NewEncoder(&b).Encode(out); err != nil {
		panic("config: encoding the rules file: " + err.Error()) // strings and lists of strings always encode
	}
	return b.Bytes()
}

// writeAtomic replaces path with data: a 0600 temp file beside it, fsynced,
// renamed over it, the directory fsynced. A symbolic link in path's place
// is refused, never followed or replaced. The directory is made (0700) if
// missing.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (a symbolic link?), so it is not replaced", path)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
