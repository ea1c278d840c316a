// Command v2beta1-oracle prints what mpi-operator v0.8.2's own controller creates for one
// kubeflow.org/v2beta1 MPIJob, read as YAML or JSON from stdin.
//
// It runs the operator's MPIJobController (pkg/controller, NewMPIJobController and Run, the code
// cmd/mpi-operator runs) over fake clientsets and informers. Every worker pod it creates is then marked
// Running and Ready, as the kubelet would, so the controller goes on as on a cluster: it writes the
// running workers into discover_hosts.sh and, under WaitForWorkersReady, creates the launcher Job. Once
// the launcher Job exists and nothing changes any more, every object in the fake clientsets (but
// Events) is printed as a v1 List, sorted by kind and name, without status.
//
// Exit 0: the List (empty when the operator skips the job: managedBy names another controller).
// Exit 1: the operator refuses the job (pkg/apis/kubeflow/validation: ValidateMPIJob, which the
// controller runs after defaulting and reports only as an event), or cannot decode it into its types;
// the message on stderr.
// Exit 2: anything else.
//
// With --canonical it reads a v1 List of objects (mpigen's) instead and prints them as the API server
// stores them (../harness/canonical.go), so that both sides compare in one spelling.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kubeflow/mpi-operator/cmd/mpi-operator/app/options"
	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/validation"
	kubeflowfake "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/fake"
	"github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/scheme"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	"github.com/kubeflow/mpi-operator/pkg/controller"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	schedv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	schedfake "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned/fake"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	volcanofake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
)

const settle = 500 * time.Millisecond

func main() {
	// Volcano's generated fake clientset (volcano.sh/apis v1.14.0) does not answer the streaming list
	// client-go's informers now start with, so its informer would never sync; list as before.
	_ = os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	gang := flag.String("gang-scheduling-name", "", "the operator's --gang-scheduling: volcano, or a scheduler-plugins scheduler name")
	domain := flag.String("cluster-domain", "", "the operator's --cluster-domain")
	// The options package registers klog's flags (its init); the operator's logging is noise here.
	_ = flag.Set("v", "0")
	_ = flag.Set("logtostderr", "false")
	_ = flag.Set("alsologtostderr", "false")
	_ = flag.Set("stderrthreshold", "FATAL")
	asStored := flag.Bool("canonical", false, "read a v1 List of objects instead and print them as the API server stores them")
	flag.Parse()
	klog.SetOutput(io.Discard)

	if *asStored {
		objects, err := canonical(os.Stdin, storedScheme())
		if err != nil {
			fail(2, err)
		}
		printList(objects)
		return
	}
	job, err := read(os.Stdin)
	if err != nil {
		// The operator's informer cannot decode it: the job never runs.
		fail(1, fmt.Errorf("decoding the MPIJob: %w", err))
	}
	objects, err := run(job, *gang, *domain)
	if err != nil {
		fail(2, err)
	}
	printList(objects)
}

// storedScheme knows every kind mpigen renders for a v2beta1 job.
func storedScheme() *runtime.Scheme {
	stored := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, volcanov1beta1.AddToScheme, schedv1alpha1.AddToScheme,
	} {
		if err := add(stored); err != nil {
			fail(2, err)
		}
	}
	return stored
}

func read(r io.Reader) (*kubeflow.MPIJob, error) {
	data, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	job := &kubeflow.MPIJob{}
	// Not strict: the API server prunes what the CRD does not know.
	if err := json.Unmarshal(data, job); err != nil {
		return nil, err
	}
	if job.Namespace == "" {
		job.Namespace = metav1.NamespaceDefault
	}
	return job, nil
}

func run(job *kubeflow.MPIJob, gang, domain string) ([]map[string]any, error) {
	// What syncHandler does first, with the same exported functions: default, skip, validate.
	defaulted := job.DeepCopy()
	scheme.Scheme.Default(defaulted)
	if m := defaulted.Spec.RunPolicy.ManagedBy; m != nil && *m != kubeflow.KubeflowJobController {
		return []map[string]any{}, nil
	}
	if errs := validation.ValidateMPIJob(defaulted); len(errs) != 0 {
		fmt.Fprintf(os.Stderr, "Found validation errors: %v\n", errs.ToAggregate())
		os.Exit(1)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kubeClient := kubefake.NewSimpleClientset()
	kubeflowClient := kubeflowfake.NewSimpleClientset(job)
	volcanoClient := volcanofake.NewSimpleClientset()
	schedClient := schedfake.NewSimpleClientset()
	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	kubeflowInformers := informers.NewSharedInformerFactory(kubeflowClient, 0)
	c, err := controller.NewMPIJobController(ctx, kubeClient, kubeflowClient, volcanoClient, schedClient,
		kubeInformers.Core().V1().ConfigMaps(), kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(), kubeInformers.Batch().V1().Jobs(),
		kubeInformers.Core().V1().Pods(), kubeInformers.Scheduling().V1().PriorityClasses(),
		kubeflowInformers.Kubeflow().V2beta1().MPIJobs(),
		&options.ServerOption{
			Namespace:           metav1.NamespaceAll,
			GangSchedulingName:  gang,
			ControllerRateLimit: 10,
			ControllerBurst:     100,
			ClusterDomain:       domain,
		})
	if err != nil {
		return nil, err
	}
	kubeInformers.Start(ctx.Done())
	kubeflowInformers.Start(ctx.Done())
	if c.PodGroupCtrl != nil {
		c.PodGroupCtrl.StartInformerFactory(ctx.Done())
	}
	go func() { _ = c.Run(1, ctx.Done()) }()

	deadline := time.Now().Add(15 * time.Second)
	lastChange, seen := time.Now(), -1
	for {
		if time.Now().After(deadline) {
			var done []string
			all := append(append(kubeClient.Actions(), kubeflowClient.Actions()...), volcanoClient.Actions()...)
			for _, a := range all {
				done = append(done, a.GetVerb()+" "+a.GetResource().Resource)
				if c, ok := a.(k8stesting.CreateAction); ok {
					if e, ok := c.GetObject().(*corev1.Event); ok {
						done = append(done, e.Reason+": "+e.Message)
					}
				}
			}
			return nil, fmt.Errorf("the controller did not create the launcher Job within 60s: %v", done)
		}
		if err := markWorkersReady(ctx, kubeClient, job.Namespace); err != nil {
			return nil, err
		}
		actions := writes(kubeClient.Actions()) + writes(volcanoClient.Actions()) + writes(schedClient.Actions())
		if actions != seen {
			seen, lastChange = actions, time.Now()
		}
		_, launcherErr := kubeClient.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name+"-launcher", metav1.GetOptions{})
		if launcherErr == nil && time.Since(lastChange) > settle {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return collect(ctx, job.Namespace, kubeClient, volcanoClient, schedClient)
}

// writes counts the actions that change something (the informers and this loop read all the time).
func writes(actions []k8stesting.Action) int {
	n := 0
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			n++
		}
	}
	return n
}

// markWorkersReady does the kubelet's part: every pod becomes Running and Ready.
func markWorkersReady(ctx context.Context, client *kubefake.Clientset, namespace string) error {
	pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Status.Phase == corev1.PodRunning {
			continue
		}
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		// The controller's pod update handler ignores an update that keeps the resourceVersion (the fake
		// clientset keeps whatever it is given).
		pod.ResourceVersion = "ready"
		if _, err := client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func collect(ctx context.Context, ns string, kube *kubefake.Clientset, volcano *volcanofake.Clientset, sched *schedfake.Clientset) ([]map[string]any, error) {
	var objects []map[string]any
	add := func(apiVersion, kind string, obj any) error {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u["apiVersion"], u["kind"] = apiVersion, kind
		delete(u, "status")
		meta := u["metadata"].(map[string]any)
		delete(meta, "resourceVersion")
		delete(meta, "creationTimestamp")
		objects = append(objects, u)
		return nil
	}
	opts := metav1.ListOptions{}
	services, err := kube.CoreV1().Services(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range services.Items {
		if err := add("v1", "Service", &services.Items[i]); err != nil {
			return nil, err
		}
	}
	configMaps, err := kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range configMaps.Items {
		if err := add("v1", "ConfigMap", &configMaps.Items[i]); err != nil {
			return nil, err
		}
	}
	secrets, err := kube.CoreV1().Secrets(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range secrets.Items {
		if err := add("v1", "Secret", &secrets.Items[i]); err != nil {
			return nil, err
		}
	}
	pods, err := kube.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if err := add("v1", "Pod", &pods.Items[i]); err != nil {
			return nil, err
		}
	}
	jobs, err := kube.BatchV1().Jobs(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range jobs.Items {
		if err := add("batch/v1", "Job", &jobs.Items[i]); err != nil {
			return nil, err
		}
	}
	vpgs, err := volcano.SchedulingV1beta1().PodGroups(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range vpgs.Items {
		if err := add("scheduling.volcano.sh/v1beta1", "PodGroup", &vpgs.Items[i]); err != nil {
			return nil, err
		}
	}
	spgs, err := sched.SchedulingV1alpha1().PodGroups(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range spgs.Items {
		if err := add("scheduling.x-k8s.io/v1alpha1", "PodGroup", &spgs.Items[i]); err != nil {
			return nil, err
		}
	}
	sortObjects(objects)
	return objects, nil
}
