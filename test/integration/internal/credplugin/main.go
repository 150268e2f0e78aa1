package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	credentialproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "credplugin:", err)
		os.Exit(1)
	}
}

func run() error {
	data, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	if err != nil {
		return err
	}
	var req credentialproviderv1.CredentialProviderRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if req.APIVersion != credentialproviderv1.SchemeGroupVersion.String() || req.Kind != "CredentialProviderRequest" || req.Image == "" {
		return fmt.Errorf("request %s: want a CredentialProviderRequest of %s naming an image", data, credentialproviderv1.SchemeGroupVersion)
	}
	if path := os.Getenv("CREDPLUGIN_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(f, req.Image)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	registry, _, _ := strings.Cut(req.Image, "/")
	return json.NewEncoder(os.Stdout).Encode(&credentialproviderv1.CredentialProviderResponse{
		TypeMeta:     metav1.TypeMeta{APIVersion: credentialproviderv1.SchemeGroupVersion.String(), Kind: "CredentialProviderResponse"},
		CacheKeyType: credentialproviderv1.RegistryPluginCacheKeyType,
		Auth: map[string]credentialproviderv1.AuthConfig{
			registry: {Username: os.Getenv("CREDPLUGIN_USER"), Password: os.Getenv("CREDPLUGIN_PASSWORD")},
		},
	})
}
