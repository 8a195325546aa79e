// The cluster's CoreDNS: only the plugins its Corefile uses (manifests/bootstrap.yaml), so that
// the build skips the cloud SDKs and tracers of the full plugin set. build-binaries.sh builds it
// with go-tool.sh --main.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The order of plugin.cfg, which decides the order a query passes through them.
func init() {
	dnsserver.Directives = []string{"ready", "health", "errors", "cache", "kubernetes"}
}

func main() {
	coremain.Run()
}
