// Package uts46 converts domain names to ASCII with UTS #46, Unicode IDNA
// Compatibility Processing, as the URL Standard uses it, over Unicode
// tables of its own generated from one pinned Unicode version
// (UnicodeVersion).
package uts46

//go:generate go run gen.go
