//go:build race

package hashkey

const raceEnabled = true
