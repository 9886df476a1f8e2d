package service

import (
	"sort"
	"sync"
)

// problems are the sentences shown in the Problems property: damaged files
// set aside at start, and storage failures that are still true. Each has a
// key so a failure that heals (the disk has space again) clears its own
// sentence. It has its own small lock because the io side sets problems
// while mu is not held, and View reads them under mu.
type problems struct {
	mu sync.Mutex
	m  map[string]string
}

func (p *problems) set(key, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = make(map[string]string)
	}
	p.m[key] = msg
}

func (p *problems) clear(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, key)
}

// list returns the sentences in key order, so the property is stable.
func (p *problems) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.m))
	for k := range p.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.m[k]
	}
	return out
}
