// Command v1-oracle prints what the training-operator v1.9.3's own MPIJob controller creates for one
// kubeflow.org/v1 MPIJob, read as YAML or JSON from stdin.
//
// It runs the operator's MPIJobReconciler (pkg/controller.v1/mpi: Reconcile, and through it
// pkg/controller.v1/common: ReconcileJobs) with the JobController NewReconciler would give it, over
// fakes: the reconciler reads through a controller-runtime client and writes through a client-go
// clientset, so this program plays the cluster's part: what is written is copied at once where the
// reconciler reads (an uncached client), every pod as Running and Ready (as the kubelet would make it),
// and after each Reconcile a Volcano PodGroup becomes Inqueue (as Volcano's scheduler would make it). Reconcile runs again until it
// writes nothing new. Every object written (but Events) is then printed as a v1 List, sorted by kind
// and name, without status.
//
// Exit 0: the List (empty when the operator skips the job: managedBy names another controller).
// Exit 1: the operator refuses the job (Reconcile's error: ValidateV1MpiJobSpec), or cannot decode it
// into its types; the message on stderr.
// Exit 2: anything else.
//
// With --canonical it reads a v1 List of objects (mpigen's) instead and prints them as the API server
// stores them (../harness/canonical.go), so that both sides compare in one spelling.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-logr/logr"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/common/util"
	"github.com/kubeflow/training-operator/pkg/config"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/control"
	"github.com/kubeflow/training-operator/pkg/controller.v1/expectation"
	"github.com/kubeflow/training-operator/pkg/controller.v1/mpi"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	volcanofake "volcano.sh/apis/pkg/client/clientset/versioned/fake"
)

const passes = 6

func main() {
	gang := flag.String("gang-scheduler-name", "", "the operator's --gang-scheduler-name: volcano, or a scheduler-plugins scheduler name")
	flag.StringVar(&config.Config.MPIKubectlDeliveryImage, "mpi-kubectl-delivery-image",
		config.MPIKubectlDeliveryImageDefault, "the operator's --mpi-kubectl-delivery-image")
	asStored := flag.Bool("canonical", false, "read a v1 List of objects instead and print them as the API server stores them")
	flag.Parse()
	logrus.SetOutput(io.Discard)
	ctrl.SetLogger(logr.Discard())

	if *asStored {
		scheme, err := newScheme()
		if err != nil {
			fail(2, err)
		}
		objects, err := canonical(os.Stdin, scheme)
		if err != nil {
			fail(2, err)
		}
		printList(objects)
		return
	}

	job, err := read(os.Stdin)
	if err != nil {
		// The operator cannot decode it into its types: the job never runs.
		fail(1, fmt.Errorf("decoding the MPIJob: %w", err))
	}
	objects, err := run(job, *gang)
	var refused refusal
	if errors.As(err, &refused) {
		fail(1, err)
	}
	if err != nil {
		fail(2, err)
	}
	printList(objects)
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, kubeflowv1.AddToScheme, volcanov1beta1.AddToScheme, schedulerpluginsv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

type refusal struct{ error }

func read(r io.Reader) (*kubeflowv1.MPIJob, error) {
	data, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	job := &kubeflowv1.MPIJob{}
	// Not strict: the API server prunes what the CRD does not know.
	if err := json.Unmarshal(data, job); err != nil {
		return nil, err
	}
	if job.Namespace == "" {
		job.Namespace = metav1.NamespaceDefault
	}
	job.TypeMeta = metav1.TypeMeta{APIVersion: kubeflowv1.SchemeGroupVersion.String(), Kind: kubeflowv1.MPIJobKind}
	return job, nil
}

// fakes are the cluster as the reconciler sees it (reads) and as it writes it.
type fakes struct {
	reads   client.Client
	kube    *kubefake.Clientset
	volcano *volcanofake.Clientset
}

func run(job *kubeflowv1.MPIJob, gang string) ([]map[string]any, error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	f := fakes{
		reads:   crfake.NewClientBuilder().WithScheme(scheme).WithObjects(job).WithStatusSubresource(job).Build(),
		kube:    kubefake.NewSimpleClientset(),
		volcano: volcanofake.NewSimpleClientset(),
	}
	mirror(f)
	r := reconciler(f, scheme, gang)

	// What Reconcile does first, with the same exported functions: skip, then validate.
	if r.ManagedByExternalController(job.Spec.RunPolicy.ManagedBy) != nil {
		return []map[string]any{}, nil
	}
	if err := kubeflowv1.ValidateV1MpiJobSpec(&job.Spec); err != nil {
		return nil, refusal{fmt.Errorf("MPIJob failed validation because %w", err)}
	}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: job.Namespace, Name: job.Name}}
	var last []byte
	for pass := 0; pass < passes; pass++ {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			return nil, err
		}
		// Done once a pass changes nothing (the reconciler re-applies the PodGroup's spec every time).
		objects, err := collect(f, job.Namespace)
		if err != nil {
			return nil, err
		}
		now, err := json.Marshal(objects)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(now, last) {
			return objects, nil
		}
		last = now
		if err := playCluster(f, job.Namespace); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("the reconciler still changed objects after %d passes", passes)
}

// reconciler is what mpi.NewReconciler builds, over the fakes instead of a manager.
func reconciler(f fakes, scheme *runtime.Scheme, gang string) *mpi.MPIJobReconciler {
	recorder := record.NewFakeRecorder(10000)
	priorityClasses := kubeinformers.NewSharedInformerFactory(f.kube, 0).Scheduling().V1().PriorityClasses()
	r := &mpi.MPIJobReconciler{Client: f.reads, Scheme: scheme, Log: logr.Discard()}
	r.JobController = common.JobController{
		Controller:                  r,
		Expectations:                expectation.NewControllerExpectations(),
		WorkQueue:                   &util.FakeWorkQueue[string]{},
		Recorder:                    recorder,
		KubeClientSet:               f.kube,
		PriorityClassLister:         priorityClasses.Lister(),
		PriorityClassInformerSynced: priorityClasses.Informer().HasSynced,
		PodControl:                  control.RealPodControl{KubeClient: f.kube, Recorder: recorder},
		ServiceControl:              control.RealServiceControl{KubeClient: f.kube, Recorder: recorder},
	}
	// cmd/training-operator.v1/main.go: setupControllers
	setup := common.GenNonGangSchedulerSetupFunc()
	if strings.EqualFold(gang, string(common.GangSchedulerVolcano)) {
		setup = common.GenVolcanoSetupFunc(f.volcano)
	} else if gang != "" {
		setup = common.GenSchedulerPluginsSetupFunc(f.reads, gang)
	}
	setup(&r.JobController)
	return r
}

// mirror makes what the reconciler writes through the clientset visible at once where it reads (an
// uncached client), a pod as Running and Ready (as the kubelet would make it).
func mirror(f fakes) {
	f.kube.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		case k8stesting.CreateAction:
			obj = a.GetObject()
		case k8stesting.UpdateAction:
			obj = a.GetObject()
		default:
			return false, nil, nil
		}
		written, ok := obj.DeepCopyObject().(client.Object)
		if !ok || action.GetSubresource() != "" {
			return false, nil, nil
		}
		if _, isEvent := written.(*corev1.Event); isEvent {
			return false, nil, nil
		}
		if pod, isPod := written.(*corev1.Pod); isPod {
			pod.Status.Phase = corev1.PodRunning
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if err := upsert(context.Background(), f.reads, written); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
}

// playCluster does Volcano's part: every PodGroup becomes Inqueue.
func playCluster(f fakes, ns string) error {
	ctx := context.Background()
	pgs, err := f.volcano.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range pgs.Items {
		pg := &pgs.Items[i]
		if pg.Status.Phase != volcanov1beta1.PodGroupInqueue {
			pg.Status.Phase = volcanov1beta1.PodGroupInqueue
			if _, err := f.volcano.SchedulingV1beta1().PodGroups(ns).UpdateStatus(ctx, pg, metav1.UpdateOptions{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func upsert(ctx context.Context, c client.Client, obj client.Object) error {
	current := obj.DeepCopyObject().(client.Object)
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
	obj.SetResourceVersion("")
	if apierrors.IsNotFound(err) {
		return c.Create(ctx, obj)
	}
	if err != nil {
		return err
	}
	obj.SetResourceVersion(current.GetResourceVersion())
	if err := c.Update(ctx, obj); err != nil {
		return err
	}
	if _, ok := obj.(*corev1.Pod); ok {
		obj.SetResourceVersion("")
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
			return err
		}
		obj.SetResourceVersion(current.GetResourceVersion())
		return c.Status().Update(ctx, obj)
	}
	return nil
}

// kubeObjects lists what the reconciler writes through the clientset, with their kinds set.
func kubeObjects(kube *kubefake.Clientset, ns string) ([]client.Object, error) {
	ctx, opts := context.Background(), metav1.ListOptions{}
	var out []client.Object
	sas, err := kube.CoreV1().ServiceAccounts(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range sas.Items {
		sas.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}
		out = append(out, &sas.Items[i])
	}
	cms, err := kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range cms.Items {
		cms.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
		out = append(out, &cms.Items[i])
	}
	roles, err := kube.RbacV1().Roles(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range roles.Items {
		roles.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}
		out = append(out, &roles.Items[i])
	}
	bindings, err := kube.RbacV1().RoleBindings(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range bindings.Items {
		bindings.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}
		out = append(out, &bindings.Items[i])
	}
	services, err := kube.CoreV1().Services(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range services.Items {
		services.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
		out = append(out, &services.Items[i])
	}
	pods, err := kube.CoreV1().Pods(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		pods.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		out = append(out, &pods.Items[i])
	}
	return out, nil
}

func collect(f fakes, ns string) ([]map[string]any, error) {
	ctx := context.Background()
	written, err := kubeObjects(f.kube, ns)
	if err != nil {
		return nil, err
	}
	vpgs, err := f.volcano.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range vpgs.Items {
		vpgs.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "PodGroup"}
		written = append(written, &vpgs.Items[i])
	}
	// scheduler-plugins PodGroups are written through the controller-runtime client.
	spgs := &schedulerpluginsv1alpha1.PodGroupList{}
	if err := f.reads.List(ctx, spgs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range spgs.Items {
		spgs.Items[i].TypeMeta = metav1.TypeMeta{APIVersion: "scheduling.x-k8s.io/v1alpha1", Kind: "PodGroup"}
		written = append(written, &spgs.Items[i])
	}
	objects := []map[string]any{}
	for _, obj := range written {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		delete(u, "status")
		meta := u["metadata"].(map[string]any)
		delete(meta, "resourceVersion")
		delete(meta, "creationTimestamp")
		objects = append(objects, u)
	}
	sortObjects(objects)
	return objects, nil
}
