package server_test

import (
	"fmt"

	"github.com/urlhash/urlhash/server"
)

func ExampleIsWebRiskThreatType() {
	for _, t := range []string{"MALWARE", "SOCIAL_ENGINEERING", "malware", "PHISHING"} {
		fmt.Println(t, server.IsWebRiskThreatType(t))
	}
	// Output:
	// MALWARE true
	// SOCIAL_ENGINEERING true
	// malware false
	// PHISHING false
}
