// Command trainer-oracle prints the objects Kubeflow Trainer's TrainJob controller would create for a
// TrainJob and its (Cluster)TrainingRuntime, without a cluster.
//
// It runs Trainer's own code at the version pinned in go.mod: the runtimes of pkg/runtime/core (the map
// the TrainJob controller and its webhook look a TrainJob's runtimeRef up in), their framework and
// plugins (MPI, JobSet, CoScheduling, PlainML, Torch), over a controller-runtime fake client that holds
// the runtimes read from the input. What the cluster would do around that code is done here:
//
//   - the API server's CRD defaulting: every `default:` of the CRDs in --crds (Trainer's
//     manifests/base/crds) is applied to the input objects before they are decoded, as the API server
//     does on create (CEL rules and other schema validation are not evaluated);
//   - Trainer's validating webhooks: the runtime's replicated-job checks and the TrainJob checks
//     (DNS-1035 name, then the runtime plugins' Validate) refuse an input as the webhooks would;
//   - the controller's conversion of each apply configuration to the unstructured object it sends in
//     its server-side apply patch (field manager "trainer"): that object is what is printed.
//
// Output: one JSON `v1` List on stdout, objects grouped per TrainJob in input order, each group sorted
// by kind and name; object keys sorted. The SSH Secret's key material is random on every run: the
// oracle checks it (an EC P-521 private key in PEM, and the matching ecdsa-sha2-nistp521 public key in
// authorized_keys form) and prints a fixed description in its place. Errors go to stderr, exit 1.
//
// A `scheduling.k8s.io/v1` PriorityClass in the input is an object of the cluster (the Volcano plugin
// checks that the pods' class exists).
//
// Usage: trainer-oracle --crds DIR [FILE ...]   (no FILE, or "-": read stdin; YAML or JSON, multi-document)
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	"sigs.k8s.io/yaml"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configapi "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	trainerruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
	runtimecore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

const defaultNamespace = "default"

// Placeholders printed for the Secret's random key material once it has been checked.
const (
	privateKeyText = "(checked: EC P-521 private key, PEM \"EC PRIVATE KEY\")"
	publicKeyText  = "(checked: ecdsa-sha2-nistp521 public key of ssh-privatekey, authorized_keys line)"
)

func main() {
	crds := flag.String("crds", "", "directory of Trainer's CRDs (manifests/base/crds); their defaults are applied to the input")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: trainer-oracle --crds DIR [FILE ...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *crds == "" {
		flag.Usage()
		os.Exit(2)
	}
	out, err := run(*crds, flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "trainer-oracle: %v\n", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}

type input struct {
	trainJobs []*trainer.TrainJob
	runtimes  []client.Object
}

func run(crdDir string, files []string) ([]byte, error) {
	ctrl.SetLogger(logr.Discard())
	defaults, err := loadDefaults(crdDir)
	if err != nil {
		return nil, err
	}
	in, err := readInput(files, defaults)
	if err != nil {
		return nil, err
	}
	if len(in.trainJobs) == 0 {
		return nil, errors.New("the input has no TrainJob")
	}
	ctx := context.Background()
	scheme := apiruntime.NewScheme()
	for _, add := range []func(*apiruntime.Scheme) error{
		clientgoscheme.AddToScheme, trainer.AddToScheme, jobsetv1alpha2.AddToScheme, schedulerpluginsv1alpha1.AddToScheme,
		volcanov1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(in.runtimes...).Build()
	// The zero Configuration: the plugins that read it (TrainJobStatus) are behind a feature gate off by default.
	runtimes, err := runtimecore.New(ctx, cl, noIndexer{}, &configapi.Configuration{})
	if err != nil {
		return nil, err
	}
	var items []map[string]any
	for _, trainJob := range in.trainJobs {
		objects, err := build(ctx, cl, runtimes, trainJob)
		if err != nil {
			return nil, fmt.Errorf("TrainJob %s/%s: %w", trainJob.Namespace, trainJob.Name, err)
		}
		items = append(items, objects...)
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	out, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// build validates one TrainJob as Trainer's webhook does and returns the objects its controller would apply.
func build(ctx context.Context, cl client.Client, runtimes map[string]trainerruntime.Runtime, trainJob *trainer.TrainJob) ([]map[string]any, error) {
	key := fmt.Sprintf("%s.%s", deref(trainJob.Spec.RuntimeRef.Kind), deref(trainJob.Spec.RuntimeRef.APIGroup))
	rt, ok := runtimes[key]
	if !ok {
		return nil, fmt.Errorf("unsupported runtime: %s", key)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(trainJob.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), trainJob.Name, msg))
	}
	warnings, more := rt.ValidateObjects(ctx, nil, trainJob)
	for _, warning := range warnings {
		fmt.Fprintf(os.Stderr, "trainer-oracle: warning: TrainJob %s/%s: %s\n", trainJob.Namespace, trainJob.Name, warning)
	}
	errs = append(errs, more...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("refused by Trainer's TrainJob webhook: %w", errs.ToAggregate())
	}
	objects, err := rt.NewObjects(ctx, trainJob)
	if err != nil {
		return nil, err
	}
	var items []map[string]any
	for _, object := range objects {
		if secret, ok := object.(*corev1ac.SecretApplyConfiguration); ok {
			if err := checkSSHKeys(secret.Data); err != nil {
				return nil, fmt.Errorf("Secret %s: %w", deref(secret.Name), err)
			}
		}
		// As the TrainJob controller does before its server-side apply patch.
		u, err := apiruntime.DefaultUnstructuredConverter.ToUnstructured(object)
		if err != nil {
			return nil, err
		}
		if u["kind"] == "Secret" {
			data := u["data"].(map[string]any)
			data[corev1.SSHAuthPrivateKey] = privateKeyText
			data["ssh-publickey"] = publicKeyText
		}
		items = append(items, u)
	}
	// v2.3 NewObjects stores the runtime it read in a ConfigMap <job>-runtime-snapshot (server-side apply
	// through the client, not among the returned objects): printed too, its data as written.
	snapshot := &corev1.ConfigMap{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: trainJob.Namespace, Name: trainJob.Name + "-runtime-snapshot"}, snapshot); err == nil {
		u := map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata":   map[string]any{"name": snapshot.Name, "namespace": snapshot.Namespace},
			"data":       map[string]any{"runtime": snapshot.Data["runtime"]},
		}
		items = append(items, u)
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool {
		return sortKey(items[i]) < sortKey(items[j])
	})
	return items, nil
}

func sortKey(u map[string]any) string {
	name, _ := u["metadata"].(map[string]any)["name"].(string)
	return fmt.Sprintf("%v\x00%s", u["kind"], name)
}

// checkSSHKeys checks the Secret's two keys: a PEM EC P-521 private key and its public key.
func checkSSHKeys(data map[string][]byte) error {
	if len(data) != 2 {
		return fmt.Errorf("want 2 data keys, got %d", len(data))
	}
	block, rest := pem.Decode(data[corev1.SSHAuthPrivateKey])
	if block == nil || block.Type != "EC PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		return errors.New("ssh-privatekey is not one PEM \"EC PRIVATE KEY\" block")
	}
	private, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("ssh-privatekey: %w", err)
	}
	if private.Curve != elliptic.P521() {
		return fmt.Errorf("ssh-privatekey: curve %s, want P-521", private.Curve.Params().Name)
	}
	public, _, _, rest, err := ssh.ParseAuthorizedKey(data["ssh-publickey"])
	if err != nil || len(rest) != 0 {
		return fmt.Errorf("ssh-publickey is not one authorized_keys line: %v", err)
	}
	derived, err := ssh.NewPublicKey(&private.PublicKey)
	if err != nil {
		return err
	}
	if public.Type() != "ecdsa-sha2-nistp521" || !bytes.Equal(public.Marshal(), derived.Marshal()) {
		return fmt.Errorf("ssh-publickey (%s) is not the public key of ssh-privatekey", public.Type())
	}
	return nil
}

func readInput(files []string, defaults map[string]map[string]any) (*input, error) {
	if len(files) == 0 {
		files = []string{"-"}
	}
	in := &input{}
	for _, name := range files {
		var r io.Reader = os.Stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		} else {
			name = "<stdin>"
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
		for index := 0; ; index++ {
			doc, err := reader.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := in.add(doc, defaults); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", name, index, err)
			}
		}
	}
	return in, nil
}

func (in *input) add(doc []byte, defaults map[string]map[string]any) error {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	var object map[string]any
	if err := json.Unmarshal(raw, &object); err != nil {
		return err
	}
	if object == nil {
		return nil // an empty document
	}
	apiVersion, _ := object["apiVersion"].(string)
	kind, _ := object["kind"].(string)
	if apiVersion == "scheduling.k8s.io/v1" && kind == "PriorityClass" {
		// A PriorityClass of the cluster: the Volcano plugin's Validate looks the pods' class up.
		class := &schedulingv1.PriorityClass{}
		if err := decodeStrict(object, class); err != nil {
			return err
		}
		in.runtimes = append(in.runtimes, class)
		return nil
	}
	if apiVersion != trainer.GroupVersion.String() {
		return fmt.Errorf("apiVersion %q kind %q: want %s", apiVersion, kind, trainer.GroupVersion)
	}
	schema, ok := defaults[kind]
	if !ok {
		return fmt.Errorf("kind %q: want TrainJob, TrainingRuntime or ClusterTrainingRuntime", kind)
	}
	applyDefaults(object, schema)
	metadata, _ := object["metadata"].(map[string]any)
	if metadata == nil {
		return fmt.Errorf("%s: no metadata", kind)
	}
	if _, ok := metadata["namespace"]; !ok && kind != "ClusterTrainingRuntime" {
		metadata["namespace"] = defaultNamespace
	}
	switch kind {
	case trainer.TrainJobKind:
		trainJob := &trainer.TrainJob{}
		if err := decodeStrict(object, trainJob); err != nil {
			return err
		}
		in.trainJobs = append(in.trainJobs, trainJob)
	case trainer.TrainingRuntimeKind:
		runtime := &trainer.TrainingRuntime{}
		if err := decodeStrict(object, runtime); err != nil {
			return err
		}
		if _, err := (&webhooks.TrainingRuntimeValidator{}).ValidateCreate(context.Background(), runtime); err != nil {
			return fmt.Errorf("TrainingRuntime %s: refused by Trainer's webhook: %w", runtime.Name, err)
		}
		in.runtimes = append(in.runtimes, runtime)
	case trainer.ClusterTrainingRuntimeKind:
		runtime := &trainer.ClusterTrainingRuntime{}
		if err := decodeStrict(object, runtime); err != nil {
			return err
		}
		if _, err := (&webhooks.ClusterTrainingRuntimeValidator{}).ValidateCreate(context.Background(), runtime); err != nil {
			return fmt.Errorf("ClusterTrainingRuntime %s: refused by Trainer's webhook: %w", runtime.Name, err)
		}
		in.runtimes = append(in.runtimes, runtime)
	}
	return nil
}

// decodeStrict decodes into a typed object, refusing fields the type does not have (the API server
// would prune them; here they are more likely a mistake in a test input).
func decodeStrict(object map[string]any, into any) error {
	raw, err := json.Marshal(object)
	if err != nil {
		return err
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	return decoder.Decode(into)
}

// loadDefaults reads the openAPIV3Schema of each Trainer CRD, by kind.
func loadDefaults(dir string) (map[string]map[string]any, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	schemas := map[string]map[string]any{}
	for _, path := range paths {
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Names    struct{ Kind string } `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(text, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, version := range crd.Spec.Versions {
			if version.Name == trainer.GroupVersion.Version {
				schemas[crd.Spec.Names.Kind] = version.Schema.OpenAPIV3Schema
			}
		}
	}
	for _, kind := range []string{trainer.TrainJobKind, trainer.TrainingRuntimeKind, trainer.ClusterTrainingRuntimeKind} {
		if schemas[kind] == nil {
			return nil, fmt.Errorf("no %s CRD (version %s) in %s", kind, trainer.GroupVersion.Version, dir)
		}
	}
	return schemas, nil
}

// applyDefaults sets every absent property that has a `default:` in its schema, then descends into
// properties, array items and additionalProperties: the order of the API server's structural
// defaulting, so a defaulted object receives its own nested defaults too.
func applyDefaults(value any, schema map[string]any) {
	switch v := value.(type) {
	case map[string]any:
		properties, _ := schema["properties"].(map[string]any)
		for _, name := range sortedKeys(properties) {
			property, _ := properties[name].(map[string]any)
			if def, ok := property["default"]; ok {
				if _, present := v[name]; !present {
					v[name] = deepCopy(def)
				}
			}
		}
		additional, _ := schema["additionalProperties"].(map[string]any)
		for name, child := range v {
			if property, ok := properties[name].(map[string]any); ok {
				applyDefaults(child, property)
			} else if additional != nil {
				applyDefaults(child, additional)
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for _, child := range v {
				applyDefaults(child, items)
			}
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func deepCopy(value any) any {
	raw, _ := json.Marshal(value)
	var copied any
	_ = json.Unmarshal(raw, &copied)
	return copied
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return strings.Clone(*s)
}

// noIndexer accepts the field indexes the runtimes register: the fake client answers only Get here.
type noIndexer struct{}

func (noIndexer) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return nil
}
