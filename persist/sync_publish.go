package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/antidrift/antidrift/service"
)

// Publisher keeps this device's copy of its sealed chain in sync_dir (see
// sync_layout.go): after each seal, and once at start, it rewrites the copy
// from audit.jsonl, atomically, in the device's own folder and nowhere
// else. Syncthing moves the folder to the other machines.
//
// It runs in a goroutine of its own, woken by Poke, so a slow or failing
// sync_dir (a full disk, a folder Syncthing has not created yet) never
// holds up a seal: the chain in the state directory is the record, the
// copy only follows it. Pokes that come while it works coalesce into one
// more pass. Idle, it waits on a channel and costs nothing.
type Publisher struct {
	store   *Store
	syncDir string
	id      string
	name    string
	titles  bool
	now     func() time.Time
	// report hears the outcome of every pass: "" when the copy is up to
	// date, else a sentence for Problems.
	report func(problem string)
	// log hears what a pass found worth saying once, that is no problem:
	// another device's key pinned the first time it was read.
	log func(news string)

	// stamps are the other device folders' files as the last pass read
	// them (rememberOthers); only the publisher's goroutine touches it.
	stamps map[string]Stamp

	wake chan struct{}
	stop chan struct{}
	done sync.WaitGroup
}

// NewPublisher publishes store's chain under device id, labelled name,
// into syncDir (which must exist: it is Syncthing's folder, and creating
// it where the person did not mean would publish to nowhere).
func NewPublisher(store *Store, syncDir, id, name string, titles bool, report func(string)) *Publisher {
	return &Publisher{store: store, syncDir: syncDir, id: id, name: name, titles: titles, now: time.Now, report: report,
		log: func(string) {}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// SetLog has log hear what a pass found worth saying once (a device's key
// pinned); call it before Start.
func (p *Publisher) SetLog(log func(news string)) { p.log = log }

// Start runs the publisher until Close, with a first pass right away.
func (p *Publisher) Start() {
	p.Poke()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		for {
			select {
			case <-p.stop:
				return
			case <-p.wake:
				p.report(p.PublishNow())
			}
		}
	}()
}

// Poke asks for a pass; it never blocks.
func (p *Publisher) Poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Close stops the publisher after the pass under way, if any.
func (p *Publisher) Close() {
	close(p.stop)
	p.done.Wait()
}

// Changed, SessionEnded and Nudged make the publisher a service.Listener:
// a sealed session pokes it (a summary sealed later, from pending, is
// sealed at the next End or start, each of which pokes it too).
func (p *Publisher) Changed()              {}
func (p *Publisher) Nudged(string, string) {}
func (p *Publisher) SessionEnded(_ string, _ service.Outcome, hash string) {
	if hash != "" {
		p.Poke()
	}
}

// Folder is the device's folder in sync_dir.
func (p *Publisher) Folder() string { return filepath.Join(p.syncDir, LayoutFolder, p.id) }

// PublishNow brings the copy up to date and returns "" or what is wrong,
// as a sentence for Problems: that it could not, or what it found and
// put right (a line in this machine's folder that it never signed, a
// damaged device key replaced).
func (p *Publisher) PublishNow() string {
	notice, err := p.publish()
	if err != nil {
		return strings.TrimSpace(notice + fmt.Sprintf(" This machine's record could not be published to sync_dir (%v); the record itself is safe in the state directory, and the copy is brought up to date after the next seal.", err))
	}
	p.rememberOthers()
	return notice
}

// rememberOthers records the furthest head of every other device's copy
// (sync_seen.go): of its lines that count, signed by its pinned key (sync_keys.go,
// pinned here the first time, and logged), so a copy that later falls
// behind it is noticed and a forged line never becomes the mark. Only
// heads and keys are kept: no other device's data enters the state
// directory. A folder whose files are as the last pass found them is not
// read again (stamps), so a seal costs nothing for the machines that did
// not change; the read is within DefaultReadBounds, and lines up to a
// remembered head are checked by hash alone. Heads of devices whose folder
// is gone are forgotten, unless the device's key is pinned here. A failure costs only that memory, and is logged
// by nobody: the next pass tries again.
func (p *Publisher) rememberOthers() {
	trust := LoadTrust(p.store.dir)
	devs, _, err := ReadSharedWith(p.syncDir, trust, ReadOptions{Unchanged: p.stamps})
	if err != nil {
		return
	}
	if p.stamps == nil {
		p.stamps = map[string]Stamp{}
	}
	var others []SharedDevice
	for _, d := range devs {
		if d.Pinned != "" {
			p.log(d.Pinned)
		}
		if d.Stamp.Chain != (fileStamp{}) {
			p.stamps[d.Folder] = d.Stamp
		}
		if d.ID != p.id && !d.Unchanged {
			others = append(others, d)
		}
	}
	present, complete := listDeviceFolders(p.syncDir)
	if complete {
		for f := range p.stamps {
			if !present[f] {
				delete(p.stamps, f)
			}
		}
		// A pinned device's head outlives its folder: a peer that deletes
		// a machine's folder, waits for a seal here and then puts back an
		// older signed copy must find the truncation still noticed. Pins
		// are bounded (maxPins), and forget-key lets the head go too.
		for id := range trust.pins {
			present[id] = true
		}
	} else {
		present = nil
	}
	_ = p.store.RememberDevices(others, present)
}

func (p *Publisher) publish() (notice string, err error) {
	key, keyProblem, err := p.store.DeviceKey()
	if err != nil {
		return "", err
	}
	pub := key.Public().(ed25519.PublicKey)
	source, err := ReadStateFile(p.store.audit.path)
	if errors.Is(err, os.ErrNotExist) {
		source, err = nil, nil
	}
	if err != nil {
		return keyProblem, err
	}
	content, entries, head, problem := publishedForm(source, p.titles, key, p.id)
	form, file, other := formTotals, PublishedTotals, PublishedChain
	if p.titles {
		form, file, other = formChain, PublishedChain, PublishedTotals
	}
	v := p.store.VerifyAudit()
	if problem != "" && v.OK {
		v.OK, v.Problem = false, problem
	}

	dir, folderNotice, err := p.openFolder()
	if err != nil {
		return keyProblem, err
	}
	defer dir.Close()
	// Both forms are checked: a machine with this id that publishes the
	// other form would otherwise have its file removed below.
	var old []byte
	var notices []string
	if keyProblem != "" {
		notices = append(notices, keyProblem)
	}
	if folderNotice != "" {
		notices = append(notices, folderNotice)
	}
	planted := false
	for _, f := range []string{PublishedChain, PublishedTotals} {
		there, err := readIn(dir, f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if errors.Is(err, errSymlink) || errors.Is(err, errNotRegular) || errors.Is(err, errPublishedTooLarge) {
			// Never a copy this machine wrote, nor one another machine
			// with its id and key would: something planted in its
			// folder, replaced (or removed) below, never read.
			what := "a file larger than any copy"
			if errors.Is(err, errSymlink) {
				what = "a symbolic link"
			} else if errors.Is(err, errNotRegular) {
				what = "something that is not a file (a directory or a FIFO)"
			}
			notices = append(notices, fmt.Sprintf("This machine's folder in sync_dir (%s/%s) held %s in place of %s, never this machine's copy; it was replaced with its own record, and not read. Something wrote into this machine's folder in sync_dir: see docs/sync.md.",
				LayoutFolder, p.id, what, f))
			planted = true
			continue
		}
		if err != nil {
			return strings.Join(notices, " "), err
		}
		ours, fForm := content, form
		if f != file {
			fForm = formTotals
			if f == PublishedChain {
				fForm = formChain
			}
			ours, _, _, _ = publishedForm(source, f == PublishedChain, key, p.id)
		} else {
			old = there
		}
		replaced, err := notAnotherWriter(there, ours, pub, p.id, fForm, f)
		if err != nil {
			return strings.Join(notices, " "), err
		}
		if replaced != "" {
			notices = append(notices, replaced)
		}
	}
	notice = strings.Join(notices, " ")
	p.retireUnsignedFolder()
	want := publishedDevice{
		Layout: LayoutVersion, DeviceID: p.id, DeviceName: p.name, Form: form, File: file,
		Entries: entries, HeadSeq: head.Seq, HeadHash: head.Hash,
		SourceOK: v.OK, SourceProblem: v.Problem, PublicKey: base64.StdEncoding.EncodeToString(pub),
	}
	if !planted && old != nil && bytes.Equal(old, content) && deviceFileCurrent(dir, want, pub) {
		return notice, nil
	}
	if err := replaceIn(dir, file, content); err != nil {
		return notice, fmt.Errorf("writing %s: %w", filepath.Join(dir.Name(), file), err)
	}
	want.PublishedUnix = p.now().Unix()
	meta, _ := json.Marshal(want)
	if err := replaceIn(dir, PublishedDevice, append(signDeviceFile(key, meta), '\n')); err != nil {
		return notice, fmt.Errorf("writing %s: %w", filepath.Join(dir.Name(), PublishedDevice), err)
	}
	// The other form, from before sync_titles changed, would read as a
	// second chain of this device.
	if err := unix.Unlinkat(int(dir.Fd()), other, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return notice, fmt.Errorf("removing the old %s: %w", other, err)
	}
	return notice, nil
}

// retireUnsignedFolder removes this device's folder of layout 1
// (antidrift-v1/<id>, unsigned), which an earlier antidrift published:
// its three files and the folder, nothing else, never through a link. A
// failure leaves it; readers name it and do not read it.
func (p *Publisher) retireUnsignedFolder() {
	root, err := os.Open(p.syncDir)
	if err != nil {
		return
	}
	defer root.Close()
	layout, err := openIn(root, unsignedLayout, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	defer layout.Close()
	dir, err := openIn(layout, p.id, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return
	}
	for _, f := range []string{PublishedDevice, PublishedChain, PublishedTotals} {
		_ = unix.Unlinkat(int(dir.Fd()), f, 0)
	}
	dir.Close()
	if unix.Unlinkat(int(layout.Fd()), p.id, unix.AT_REMOVEDIR) == nil {
		// The layout folder goes too once no machine is left in it.
		if names, err := layout.Readdirnames(-1); err == nil && !slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, ".") }) {
			for _, n := range names {
				_ = unix.Unlinkat(int(layout.Fd()), n, 0)
				_ = unix.Unlinkat(int(layout.Fd()), n, unix.AT_REMOVEDIR)
			}
			_ = unix.Unlinkat(int(root.Fd()), unsignedLayout, unix.AT_REMOVEDIR)
		}
	}
}

// deviceFileCurrent reports whether the folder's device.json already says
// what this publisher would (want, whenever it was published), signed:
// then an unchanged chain needs no write at all, and a restart touches
// nothing. An older device.json of this machine's, replayed into its
// folder (one that said its audit.jsonl did not verify, say), is not
// current, and is replaced.
func deviceFileCurrent(dir *os.File, want publishedDevice, pub ed25519.PublicKey) bool {
	data, err := readIn(dir, PublishedDevice)
	if err != nil {
		return false
	}
	var d publishedDevice
	if json.Unmarshal(data, &d) != nil || !deviceFileSignedBy(pub, data) {
		return false
	}
	d.PublishedUnix, d.Sig = 0, ""
	return d == want
}

// notAnotherWriter refuses to overwrite a copy this machine did not
// write. This device's copy is a prefix of what it publishes now (the
// chain only grows); a copy that is not, yet every line of which is signed
// with this machine's own key and chains — it holds another line at some
// seq, or more lines than this chain has — was written by another machine
// with the same device id and the same key (a copied state directory),
// and overwriting it would make two writers of one file, each undoing the
// other.
//
// Lines not signed with this machine's key were never written by it: a
// forgery, or damage after it was written. The copy is repaired, since
// this machine is its one writer, and replaced says so when a line was
// forged rather than the file cut short.
func notAnotherWriter(old, now []byte, pub ed25519.PublicKey, id, form, file string) (replaced string, err error) {
	if len(old) == 0 || bytes.HasPrefix(now, old) {
		return "", nil
	}
	c := checkSignedChain(old, pub, id, form)
	if c.unsigned == 0 && c.chain.OK {
		return "", fmt.Errorf("the copy in %s/%s/%s holds sessions this machine never sealed, signed with this machine's own key: another machine publishes under the same device id %s with a copy of this machine's key (a copied state directory), or this machine's audit.jsonl was rewritten. "+
			"Nothing was overwritten. Fix: on one of the two machines, stop antidriftd, move %s and %s out of its state directory and start it again (it makes a new id and key), then delete the folder it used to publish in",
			LayoutFolder, id, file, id, deviceFileName, deviceKeyFileName)
	}
	if c.unsigned == 0 {
		return "", nil // damaged, not forged: repaired without a word, as before
	}
	return fmt.Sprintf("This machine's copy in sync_dir (%s/%s/%s) held %d line(s) not signed with this machine's key (%s); they were never this machine's, and the copy was replaced with its own record. Something wrote into this machine's folder in sync_dir: see docs/sync.md.",
		LayoutFolder, id, file, c.unsigned, c.firstUnsigned), nil
}

// openFolder opens <sync_dir>/antidrift-v1/<id>, creating the two levels
// below sync_dir 0700 as needed, and following no symbolic link below
// sync_dir: a link planted there would have the daemon write wherever it
// points.
func (p *Publisher) openFolder() (_ *os.File, notice string, _ error) {
	root, err := os.Open(p.syncDir)
	if err != nil {
		return nil, "", fmt.Errorf("sync_dir %s cannot be opened (%v): create it as the folder Syncthing shares, see docs/sync.md", p.syncDir, err)
	}
	if info, err := root.Stat(); err != nil || !info.IsDir() {
		root.Close()
		return nil, "", fmt.Errorf("sync_dir %s is not a directory", p.syncDir)
	}
	dir := root
	for _, name := range []string{LayoutFolder, p.id} {
		err := unix.Mkdirat(int(dir.Fd()), name, uint32(privateDirMode))
		if err != nil && !errors.Is(err, unix.EEXIST) {
			dir.Close()
			return nil, "", fmt.Errorf("creating %s: %w", filepath.Join(dir.Name(), name), err)
		}
		next, err := openIn(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if errors.Is(err, errSymlink) || errors.Is(err, unix.ENOTDIR) {
			// A link or a file in place of this machine's own folder
			// (which only it writes), or of the layout's folder: removed,
			// never followed, and the folder made again.
			what := "a file"
			if errors.Is(err, errSymlink) {
				what = "a symbolic link"
			}
			if uerr := unix.Unlinkat(int(dir.Fd()), name, 0); uerr == nil {
				notice = fmt.Sprintf("%s in sync_dir was not a folder but %s; it was removed and made again with this machine's own record. Something wrote into sync_dir: see docs/sync.md.",
					strings.TrimPrefix(filepath.Join(dir.Name(), name), filepath.Clean(p.syncDir)+"/"), what)
				if err = unix.Mkdirat(int(dir.Fd()), name, uint32(privateDirMode)); err == nil {
					next, err = openIn(dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
				}
			}
		}
		dir.Close()
		if err != nil {
			return nil, notice, err
		}
		dir = next
	}
	return dir, notice, nil
}

// errPublishedTooLarge is a published file past maxPublishedFile.
var errPublishedTooLarge = fmt.Errorf("is larger than %d MiB", maxPublishedFile>>20)

// readIn reads name in dir, never through a link, at most maxPublishedFile.
func readIn(dir *os.File, name string) ([]byte, error) {
	f, err := openIn(dir, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPublishedFile+1))
	if err == nil && len(data) > maxPublishedFile {
		err = &os.PathError{Op: "read", Path: f.Name(), Err: errPublishedTooLarge}
	}
	return data, err
}

// replaceIn replaces name in dir with data atomically, relative to dir:
// a fresh temp file (O_EXCL, so never a planted one), fsynced, renamed
// over name, and the rename made durable. A rename replaces a link in
// name's place without following it.
func replaceIn(dir *os.File, name string, data []byte) error {
	dfd := int(dir.Fd())
	var tmp string
	var fd int
	for n := 0; ; n++ {
		tmp = fmt.Sprintf(".%s.tmp-%d-%d", name, os.Getpid(), n)
		var err error
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(privateFileMode))
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || n > 100 {
			return err
		}
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
		if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			// A directory planted in name's place (only this machine
			// writes its folder): moved aside under a hidden name that no
			// reader opens, never walked into, and the rename tried again.
			aside := fmt.Sprintf(".%s.not-ours-%d", name, time.Now().UnixNano())
			if err = unix.Renameat(dfd, name, dfd, aside); err == nil {
				err = unix.Renameat(dfd, tmp, dfd, name)
			}
		}
	}
	if err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return err
	}
	return dir.Sync()
}
