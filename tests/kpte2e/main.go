// Command kpt-e2e runs kpt's own e2e runner (github.com/GoogleContainerTools/kpt pkg/test/runner, the one
// kptdev/krm-functions-catalog runs its examples with) over the test cases under a directory.
package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/GoogleContainerTools/kpt/pkg/test/runner"
)

var root string

func TestCatalog(t *testing.T) {
	cases, err := runner.ScanTestCases(root)
	if err != nil {
		t.Fatalf("scan %s: %v", root, err)
	}
	if len(*cases) == 0 {
		t.Fatalf("no test case under %s", root)
	}
	for _, c := range *cases {
		c := c
		t.Run(c.Path, func(t *testing.T) {
			if c.Config.Skip {
				t.Skip()
			}
			r, err := runner.NewRunner(t, c, c.Config.TestType)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if err := r.Run(); err != nil {
				t.Fatalf("%v", err)
			}
		})
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kpt-e2e DIR [-test.v]")
		os.Exit(2)
	}
	root = os.Args[1]
	os.Args = append(os.Args[:1], os.Args[2:]...)
	match := func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) }
	testing.Main(match, []testing.InternalTest{{Name: "TestCatalog", F: TestCatalog}}, nil, nil)
}
