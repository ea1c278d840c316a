// argocd-cmp-server as Argo CD ships it: Argo CD's own command (cmd/argocd-cmp-server/commands), which
// Argo CD's one `argocd` binary runs when it is called argocd-cmp-server (cmd/main.go). Built alone here
// so that the test suite need not build every other Argo CD component with it.
package main

import (
	"os"

	"github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
)

func main() {
	if err := commands.NewCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
