//go:build !race

package keytable

const raceEnabled = false
