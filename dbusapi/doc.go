// Package dbusapi serves the core as org.antidrift.Session1 on the session
// bus: methods, typed properties with one PropertiesChanged per state
// change, signals, and org.antidrift.Error.* errors. It holds no policy:
// every decision is the service's; this package translates.
package dbusapi
