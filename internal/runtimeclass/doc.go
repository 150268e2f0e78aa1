// Package runtimeclass resolves a pod's runtimeClassName to the CRI
// runtime handler its sandbox runs with, as the kubelet's RuntimeClass
// manager does: from one shared informer on the cluster's RuntimeClasses
// (node.k8s.io/v1), which the node identity may list and watch (the Node
// authorizer's static rules for nodes allow it).
//
//	classes := runtimeclass.New(runtimeclass.Options{Logger: log})
//	go classes.Run(ctx, client)                   // connected mode
//	handler, err := classes.Handler(ctx, "gvisor") // "" for no class
//
// A class that does not exist is an error the caller shows as the
// kubelet does (runtimeclass.node.k8s.io "x" not found, apierrors'
// IsNotFound holds); the sandbox is not created, never with the default
// handler instead, and the next sync tries again. Until the first list
// has arrived, Handler waits for it a short while and then fails with
// ErrNotSynced. The class's overhead needs nothing here: the apiserver's
// RuntimeClass admission copies it into the pod's spec.overhead, which
// the agent's admission counts and internal/runtime hands to the runtime
// with the sandbox, and internal/cgroups adds to the pod cgroup's limits.
//
// Standalone there is no Classes: nothing can resolve a class, and
// internal/runtime refuses a pod that names one.
package runtimeclass
