package testenv

import "path/filepath"

// DistDir is the checkout's dist/ directory, where the files a desktop
// loads (the GNOME Shell extension among them) live.
func DistDir() string {
	return filepath.Join(filepath.Dir(scriptsDir()), "dist")
}
