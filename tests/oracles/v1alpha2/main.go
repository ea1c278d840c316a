// Command v1alpha2-oracle prints what mpi-operator v0.3.0's own controller creates for one
// kubeflow.org/v1alpha2 MPIJob, read as YAML or JSON from stdin.
//
// It runs the operator's v1alpha2 MPIJobController (pkg/controllers/v1alpha2: NewMPIJobController and
// Run, what cmd/mpi-operator.v1alpha2 runs, with the kubeflow types added to client-go's scheme as its
// app.Run does) over fake clientsets and informers (kube, its mpijob clientset, and kube-batch's for
// gang scheduling). v0.3.0 creates the launcher Job in the same sync as the workers' StatefulSet, so
// once the launcher Job exists and nothing changes any more, every object in the fake clientsets (but
// Events) is printed as a v1 List, sorted by kind and name, without status (harness.go).
//
// Exit 0: the List. Exit 1: the operator never runs the job: it cannot decode it into its types, its
// controller panics on it (a missing Worker), or it reports the job as incomplete (an event, no
// launcher); the message on stderr. Exit 2: anything else.
//
// The flags are the operator's: --kubectl-delivery-image (deploy/v1alpha2/mpi-operator.yaml passes
// mpioperator/kubectl-delivery:latest, the default here) and --gang-scheduling.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	kubeflow "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v1alpha2"
	kubeflowfake "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/fake"
	kubeflowscheme "github.com/kubeflow/mpi-operator/pkg/client/clientset/versioned/scheme"
	informers "github.com/kubeflow/mpi-operator/pkg/client/informers/externalversions"
	controller "github.com/kubeflow/mpi-operator/pkg/controllers/v1alpha2"
	podgroupv1alpha1 "github.com/kubernetes-sigs/kube-batch/pkg/apis/scheduling/v1alpha1"
	kubebatchfake "github.com/kubernetes-sigs/kube-batch/pkg/client/clientset/versioned/fake"
	kubebatchinformers "github.com/kubernetes-sigs/kube-batch/pkg/client/informers/externalversions"
	podgroupsinformer "github.com/kubernetes-sigs/kube-batch/pkg/client/informers/externalversions/scheduling/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog"
)

const settle = 500 * time.Millisecond

func main() {
	klog.InitFlags(nil)
	gang := flag.String("gang-scheduling", "", "the operator's --gang-scheduling: the scheduler name (kube-batch, volcano)")
	image := flag.String("kubectl-delivery-image", "mpioperator/kubectl-delivery:latest", "the operator's --kubectl-delivery-image")
	_ = flag.Set("logtostderr", "false")
	_ = flag.Set("stderrthreshold", "FATAL")
	flag.Parse()
	klog.SetOutput(io.Discard)

	data, err := readJSON(os.Stdin)
	if err != nil {
		fail(1, fmt.Errorf("decoding the MPIJob: %w", err))
	}
	job := &kubeflow.MPIJob{}
	// Not strict: the v1alpha2 CRD (no structural schema) keeps what the types do not know.
	if err := json.Unmarshal(data, job); err != nil {
		fail(1, fmt.Errorf("decoding the MPIJob: %w", err))
	}
	if job.Namespace == "" {
		job.Namespace = metav1.NamespaceDefault
	}
	if job.Name == "" {
		if job.GenerateName == "" {
			fail(1, fmt.Errorf("the API server refuses an MPIJob without metadata.name or generateName"))
		}
		job.Name = job.GenerateName + "x7k2q" // the API server appends five random characters
	}
	// cmd/mpi-operator.v1alpha2/app: server.go Run adds the kubeflow types (and so their defaults).
	if err := kubeflowscheme.AddToScheme(clientgoscheme.Scheme); err != nil {
		fail(2, err)
	}
	objects, err := run(job, *gang, *image)
	if err != nil {
		fail(2, err)
	}
	sortObjects(objects)
	printList(objects)
}

func run(job *kubeflow.MPIJob, gang, image string) ([]map[string]any, error) {
	// A panic in the controller's sync (v0.3.0 dereferences a missing Worker) ends that sync, not the
	// oracle: the job never runs, which is exit 1.
	panics := make(chan any, 8)
	utilruntime.ReallyCrash = false
	utilruntime.PanicHandlers = []func(any){func(r any) {
		select {
		case panics <- r:
		default:
		}
	}}

	stop := make(chan struct{})
	defer close(stop)
	kubeClient := kubefake.NewSimpleClientset()
	kubeflowClient := kubeflowfake.NewSimpleClientset(job)
	kubebatchClient := kubebatchfake.NewSimpleClientset()
	listablePodGroups(kubebatchClient)
	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	kubeflowInformers := informers.NewSharedInformerFactory(kubeflowClient, 0)
	kubebatchInformers := kubebatchinformers.NewSharedInformerFactory(kubebatchClient, 0)
	var podgroups podgroupsinformer.PodGroupInformer
	if gang != "" {
		podgroups = kubebatchInformers.Scheduling().V1alpha1().PodGroups()
	}
	c := controller.NewMPIJobController(kubeClient, kubeflowClient, kubebatchClient,
		kubeInformers.Core().V1().ConfigMaps(), kubeInformers.Core().V1().ServiceAccounts(),
		kubeInformers.Rbac().V1().Roles(), kubeInformers.Rbac().V1().RoleBindings(),
		kubeInformers.Apps().V1().StatefulSets(), kubeInformers.Batch().V1().Jobs(),
		podgroups, kubeflowInformers.Kubeflow().V1alpha2().MPIJobs(), image, gang)
	kubeInformers.Start(stop)
	kubeflowInformers.Start(stop)
	if gang != "" {
		kubebatchInformers.Start(stop)
	}
	go func() { _ = c.Run(1, stop) }()

	deadline := time.Now().Add(15 * time.Second)
	lastChange, seen := time.Now(), -1
	for {
		select {
		case r := <-panics:
			fail(1, fmt.Errorf("the controller panicked: %v", r))
		default:
		}
		actions := writes(kubeClient.Actions()) + writes(kubebatchClient.Actions())
		if actions != seen {
			seen, lastChange = actions, time.Now()
		}
		_, launcherErr := kubeClient.BatchV1().Jobs(job.Namespace).Get(job.Name+"-launcher", metav1.GetOptions{})
		if launcherErr == nil && time.Since(lastChange) > settle {
			break
		}
		if time.Now().After(deadline) {
			if events := warnings(kubeClient.Actions()); len(events) > 0 {
				fail(1, fmt.Errorf("no launcher: %s", strings.Join(events, "; ")))
			}
			return nil, fmt.Errorf("the controller did not create the launcher Job within 15s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return collect(job.Namespace, kubeClient, kubebatchClient)
}

// listablePodGroups lets the kube-batch v0.5.0 fake clientset list PodGroups: its generated fake names
// their group "scheduling" (not scheduling.incubator.k8s.io), a group its own scheme lacks, so its
// object tracker can create, get and watch them but not list them. The PodGroups created are recorded
// and listed here.
func listablePodGroups(client *kubebatchfake.Clientset) {
	var created []podgroupv1alpha1.PodGroup
	client.PrependReactor("create", "podgroups", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if group, ok := action.(k8stesting.CreateAction).GetObject().(*podgroupv1alpha1.PodGroup); ok {
			created = append(created, *group.DeepCopy())
		}
		return false, nil, nil
	})
	client.PrependReactor("list", "podgroups", func(action k8stesting.Action) (bool, runtime.Object, error) {
		list := &podgroupv1alpha1.PodGroupList{}
		for _, group := range created {
			if group.Namespace == action.GetNamespace() {
				list.Items = append(list.Items, group)
			}
		}
		return true, list, nil
	})
}

// writes counts the actions that change something (the informers read all the time); Events are the
// recorder's, not the job's.
func writes(actions []k8stesting.Action) int {
	n := 0
	for _, a := range actions {
		switch a.GetVerb() {
		case "get", "list", "watch":
		default:
			if a.GetResource().Resource != "events" {
				n++
			}
		}
	}
	return n
}

// warnings are the Warning events the controller recorded ("Resource \"Launcher\" is missing in yaml").
func warnings(actions []k8stesting.Action) []string {
	var found []string
	for _, a := range actions {
		if create, ok := a.(k8stesting.CreateAction); ok {
			if e, ok := create.GetObject().(*corev1.Event); ok && e.Type == corev1.EventTypeWarning {
				found = append(found, e.Reason+": "+e.Message)
			}
		}
	}
	return found
}

func collect(ns string, kube *kubefake.Clientset, kubebatch *kubebatchfake.Clientset) ([]map[string]any, error) {
	objects := []map[string]any{}
	add := func(apiVersion, kind string, obj any) error {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		objects = append(objects, stored(apiVersion, kind, u))
		return nil
	}
	opts := metav1.ListOptions{}
	var errs []error
	record := func(err error) { errs = append(errs, err) }
	if list, err := kube.CoreV1().ServiceAccounts(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("v1", "ServiceAccount", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.RbacV1().Roles(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("rbac.authorization.k8s.io/v1", "Role", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.RbacV1().RoleBindings(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("rbac.authorization.k8s.io/v1", "RoleBinding", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.CoreV1().ConfigMaps(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("v1", "ConfigMap", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.CoreV1().Services(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("v1", "Service", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.AppsV1().StatefulSets(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("apps/v1", "StatefulSet", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kube.BatchV1().Jobs(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("batch/v1", "Job", &list.Items[i]))
		}
	} else {
		record(err)
	}
	if list, err := kubebatch.SchedulingV1alpha1().PodGroups(ns).List(opts); err == nil {
		for i := range list.Items {
			record(add("scheduling.incubator.k8s.io/v1alpha1", "PodGroup", &list.Items[i]))
		}
	} else {
		record(err)
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return objects, nil
}
