// Command oci-registry serves an in-memory OCI registry over plain HTTP for the tests: Crossplane and
// crank push and pull the project's packages from it. It listens on a loopback address only.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	address := flag.String("address", "127.0.0.1:0", "loopback address to listen on (port 0: a free one)")
	portFile := flag.String("port-file", "", "write the port listened on to this file once ready")
	flag.Parse()

	host, _, err := net.SplitHostPort(*address)
	if err != nil {
		log.Fatalf("--address %q: %v", *address, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		if !strings.EqualFold(host, "localhost") {
			log.Fatalf("--address %q: only loopback addresses are served", *address)
		}
	}
	listener, err := net.Listen("tcp", *address)
	if err != nil {
		log.Fatalf("cannot listen on %s: %v", *address, err)
	}
	port := listener.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		if err := os.WriteFile(*portFile, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
			log.Fatalf("cannot write %s: %v", *portFile, err)
		}
	}
	log.Printf("serving an OCI registry on %s", listener.Addr())
	log.Fatal(http.Serve(listener, registry.New(registry.Logger(log.New(os.Stderr, "", log.LstdFlags)))))
}
