package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

const deploymentName = "scaleload"

// load is the Deployment whose pods make the churn, and the watch that
// times them.
type load struct {
	cs       kubernetes.Interface
	o        *options
	startups *startups
}

// prepare makes the namespace and waits for its default ServiceAccount,
// without which no pod is admitted.
func (l *load) prepare(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.o.namespace}}
	if _, err := l.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", l.o.namespace, err)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := l.cs.CoreV1().ServiceAccounts(l.o.namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s: no default ServiceAccount after a minute: %w", l.o.namespace, err)
	}
	return nil
}

// watch starts an informer on the namespace's pods that feeds startups; the
// returned func stops it.
func (l *load) watch(ctx context.Context) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(l.cs, 0, informers.WithNamespace(l.o.namespace))
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.observe(obj) },
		UpdateFunc: func(_, obj any) { l.observe(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				l.startups.forget(p.Name)
			}
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("pod watch: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		cancel()
		f.Shutdown()
		return nil, fmt.Errorf("pod watch: not synced: %w", context.Cause(ctx))
	}
	return func() { cancel(); f.Shutdown() }, nil
}

func (l *load) observe(obj any) {
	if p, ok := obj.(*corev1.Pod); ok {
		l.startups.observe(p)
	}
}

// create makes the Deployment and waits until every replica was seen Running.
func (l *load) create(ctx context.Context) error {
	want := l.o.nodes * l.o.podsPerNode
	labels := map[string]string{"app": deploymentName}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(want)), // #nosec G115 -- at most 5000 nodes times 110 pods
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "pause", Image: l.o.image, ImagePullPolicy: corev1.PullIfNotPresent}},
				},
			},
		},
	}
	if _, err := l.cs.AppsV1().Deployments(l.o.namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("deployment %s: %w", deploymentName, err)
	}
	return l.waitFor(ctx, fmt.Sprintf("%d pods Running", want), func() bool {
		_, running, _ := l.startups.counts()
		return running >= want
	})
}

// remove deletes the Deployment (its ReplicaSet and pods go through the
// garbage collector) and waits until no pod is left.
func (l *load) remove(ctx context.Context) error {
	err := l.cs.AppsV1().Deployments(l.o.namespace).Delete(ctx, deploymentName,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if err != nil {
		return fmt.Errorf("deployment %s: %w", deploymentName, err)
	}
	return l.waitFor(ctx, "every pod gone", func() bool {
		_, _, present := l.startups.counts()
		return present == 0
	})
}

func (l *load) waitFor(ctx context.Context, what string, done func() bool) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, l.o.timeout, true, func(context.Context) (bool, error) {
		return done(), nil
	})
	if err != nil {
		seen, running, present := l.startups.counts()
		return fmt.Errorf("waiting for %s (--timeout %s): %d seen, %d Running, %d present: %w", what, l.o.timeout, seen, running, present, err)
	}
	return nil
}
