// argocd-cmp-driver: the repo-server's side of a Config Management Plugin, for mpigen's tests. It does
// what argo-cd's reposerver/repository/repository.go does with a plugin sidecar, with Argo CD's own
// packages: find the plugin among the sockets of a plugin directory (util/app/discovery:
// DetectConfigManagementPlugin, which asks each plugin MatchRepository), stream the application's
// repository to it as a tgz (util/cmp: SendRepoStream) and call GenerateManifest or
// GetParametersAnnouncement (cmpserver/apiclient).
//
// Usage: argocd-cmp-driver generate|parameters|match REPO APP_PATH < request.json
// The request (JSON) holds what the repo-server takes from the Application and the cluster:
//
//	{"appName": "...", "namespace": "...", "project": "...", "revision": "...", "repoURL": "...",
//	 "targetRevision": "...", "kubeVersion": "1.30.2", "apiVersions": ["v1", ...],
//	 "plugin": {"name": "...", "env": [{"name": "FOO", "value": "bar"}], "parameters": [...]}}
//
// The environment is built as getPluginEnvs (generate) and populatePluginAppDetails (parameters) build
// it, the parameters' variables by Argo CD's own ApplicationSourcePluginParameters.Environ. The result
// is JSON on stdout: {"manifests": [...]}, {"parameters": [...]} or {"matched": true|false}; an error
// is its text on stderr and exit 1. The plugin directory is ARGOCD_PLUGINSOCKFILEPATH, as for the
// repo-server.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	grpc_retry "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/app/discovery"
	"github.com/argoproj/argo-cd/v3/util/cmp"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
)

type request struct {
	AppName        string                            `json:"appName"`
	Namespace      string                            `json:"namespace"`
	Project        string                            `json:"project"`
	Revision       string                            `json:"revision"`
	RepoURL        string                            `json:"repoURL"`
	TargetRevision string                            `json:"targetRevision"`
	KubeVersion    string                            `json:"kubeVersion"`
	APIVersions    []string                          `json:"apiVersions"`
	Plugin         *v1alpha1.ApplicationSourcePlugin `json:"plugin"`
	// Seconds the whole call may take: the repo-server's request deadline (Argo CD's default
	// controller.repo.server.timeout.seconds is 60).
	TimeoutSeconds int `json:"timeoutSeconds"`
}

func short(revision string, n int) string {
	if len(revision) > n {
		return revision[:n]
	}
	return revision
}

// generateEnv: the variables of a manifest generation (repository.go: newEnv, getPluginEnvs,
// getPluginParamEnvs).
func generateEnv(q request, appPath string) ([]string, error) {
	env := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: q.AppName},
		{Name: "ARGOCD_APP_NAMESPACE", Value: q.Namespace},
		{Name: "ARGOCD_APP_PROJECT_NAME", Value: q.Project},
		{Name: "ARGOCD_APP_REVISION", Value: q.Revision},
		{Name: "ARGOCD_APP_REVISION_SHORT", Value: short(q.Revision, 7)},
		{Name: "ARGOCD_APP_REVISION_SHORT_8", Value: short(q.Revision, 8)},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: q.RepoURL},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: appPath},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: q.TargetRevision},
	}
	kubeVersion := ""
	if q.KubeVersion != "" {
		parsed, err := version.ParseGeneric(q.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("could not parse kubernetes version %s: %w", q.KubeVersion, err)
		}
		kubeVersion = parsed.String()
	}
	vars := append(env.Environ(), "KUBE_VERSION="+kubeVersion, "KUBE_API_VERSIONS="+strings.Join(q.APIVersions, ","))
	return pluginEnv(vars, env, q.Plugin)
}

// pluginEnv adds the Application's plugin env (ARGOCD_ENV_*, with the build variables substituted) and
// its parameters (ARGOCD_APP_PARAMETERS, PARAM_*) to vars.
func pluginEnv(vars []string, env v1alpha1.Env, plugin *v1alpha1.ApplicationSourcePlugin) ([]string, error) {
	if plugin == nil {
		return vars, nil
	}
	for _, entry := range plugin.Env {
		vars = append(vars, fmt.Sprintf("ARGOCD_ENV_%s=%s", entry.Name, env.Envsubst(entry.Value)))
	}
	params, err := plugin.Parameters.Environ()
	if err != nil {
		return nil, err
	}
	return append(vars, params...), nil
}

// detailsEnv: the variables of a parameters announcement (repository.go: populatePluginAppDetails).
func detailsEnv(q request, appPath string) ([]string, error) {
	env := v1alpha1.Env{
		{Name: "ARGOCD_APP_NAME", Value: q.AppName},
		{Name: "ARGOCD_APP_SOURCE_REPO_URL", Value: q.RepoURL},
		{Name: "ARGOCD_APP_SOURCE_PATH", Value: appPath},
		{Name: "ARGOCD_APP_SOURCE_TARGET_REVISION", Value: q.TargetRevision},
	}
	return pluginEnv(env.Environ(), env, q.Plugin)
}

func run(action, repo, app string, q request) (any, error) {
	timeout := time.Duration(q.TimeoutSeconds) * time.Second
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	repoPath, err := filepath.Abs(repo)
	if err != nil {
		return nil, err
	}
	appPath := filepath.Join(repoPath, app)
	pluginName := ""
	if q.Plugin != nil {
		pluginName = q.Plugin.Name
	}
	var env []string
	if action == "parameters" {
		env, err = detailsEnv(q, app)
	} else {
		env, err = generateEnv(q, app)
	}
	if err != nil {
		return nil, err
	}
	conn, client, err := discovery.DetectConfigManagementPlugin(ctx, appPath, repoPath, pluginName, env, nil)
	if action == "match" {
		if err != nil {
			return map[string]any{"matched": false, "reason": err.Error()}, nil
		}
		utilio.Close(conn)
		return map[string]any{"matched": true}, nil
	}
	if err != nil {
		return nil, err
	}
	defer utilio.Close(conn)
	if action == "parameters" {
		stream, err := client.GetParametersAnnouncement(ctx, grpc_retry.Disable())
		if err != nil {
			return nil, fmt.Errorf("error getting parametersAnnouncementStream: %w", err)
		}
		if err := cmp.SendRepoStream(ctx, appPath, repoPath, stream, env, nil); err != nil {
			return nil, fmt.Errorf("error sending file to cmp-server: %w", err)
		}
		response, err := stream.CloseAndRecv()
		if err != nil {
			return nil, fmt.Errorf("failed to get parameter announcement: %w", err)
		}
		return map[string]any{"parameters": response.ParameterAnnouncements}, nil
	}
	stream, err := client.GenerateManifest(ctx, grpc_retry.Disable())
	if err != nil {
		return nil, fmt.Errorf("error getting generateManifestStream: %w", err)
	}
	if err := cmp.SendRepoStream(ctx, appPath, repoPath, stream, env, nil); err != nil {
		return nil, fmt.Errorf("error sending file to cmp-server: %w", err)
	}
	response, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fmt.Errorf("error generating manifests in cmp: %w", err)
	}
	return map[string]any{"manifests": response.Manifests}, nil
}

func main() {
	if len(os.Args) != 4 || (os.Args[1] != "generate" && os.Args[1] != "parameters" && os.Args[1] != "match") {
		fmt.Fprintln(os.Stderr, "usage: argocd-cmp-driver generate|parameters|match REPO APP_PATH < request.json")
		os.Exit(2)
	}
	var q request
	if err := json.NewDecoder(os.Stdin).Decode(&q); err != nil {
		fmt.Fprintln(os.Stderr, "reading the request:", err)
		os.Exit(2)
	}
	result, err := run(os.Args[1], os.Args[2], os.Args[3], q)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
