// Package urlfrontier serves a frontier.Frontier as crawler-commons' URL
// Frontier gRPC service (urlfrontier.proto, Apache License 2.0, in LICENSE
// beside it: copied unchanged from github.com/crawler-commons/url-frontier
// at commit 69399d2) and holds the Go code protoc generates from the
// file: its messages, the client (NewURLFrontierClient) and the service
// interface. See doc.go.
package urlfrontier

// The generated files are committed. To regenerate them: apt-get install
// protobuf-compiler; go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
// google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2; go generate.
//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Murlfrontier.proto=github.com/urlhash/urlhash/frontier/urlfrontier --go-grpc_out=. --go-grpc_opt=paths=source_relative --go-grpc_opt=Murlfrontier.proto=github.com/urlhash/urlhash/frontier/urlfrontier urlfrontier.proto
