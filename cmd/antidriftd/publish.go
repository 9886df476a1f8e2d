package main

import (
	"path/filepath"
	"strings"

	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/persist"
)

// startPublisher keeps this machine's copy of its sealed chain in
// sync_dir, when it is set (docs/sync.md). It hears every seal as a
// listener and works in a goroutine of its own, so no seal waits on it;
// what goes wrong shows in Problems, and clears when a later pass works.
func (m *Main) startPublisher(cfg config.Config, store *persist.Store) {
	if cfg.SyncDir == "" {
		return
	}
	note := func(problem string) {
		if problem != "" {
			m.log.Warn(problem)
		}
		m.svc.NoteProblem("publish", problem)
	}
	if inside(cfg.SyncDir, store.Dir()) || inside(store.Dir(), cfg.SyncDir) {
		note("sync_dir " + cfg.SyncDir + " and the state directory " + store.Dir() + " lie one inside the other; antidrift publishes only a copy of its sealed chain, never the state directory itself, so nothing is published. Point sync_dir at a folder of its own (docs/sync.md)")
		return
	}
	id, problem, err := store.DeviceID()
	if problem != "" {
		m.log.Warn(problem)
	}
	if err != nil {
		note("No device id for sync_dir (" + err.Error() + "); nothing is published")
		return
	}
	m.publish = persist.NewPublisher(store, cfg.SyncDir, id, cfg.DeviceLabel(), cfg.SyncTitles, note)
	m.publish.SetLog(func(news string) { m.log.Info(news) })
	m.svc.AddListener(m.publish)
	m.publish.Start()
	m.log.Info("publishing the sealed chain to sync_dir", "folder", m.publish.Folder(), "device_name", cfg.DeviceLabel(), "sync_titles", cfg.SyncTitles)
}

// inside reports whether path is dir or lies under it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
