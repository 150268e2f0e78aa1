package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/nodeagent/nodeagent/staging/podtypes"
)

func cmVolume(name, object string, items []corev1.KeyToPath, defaultMode *int32, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: object}, Items: items, DefaultMode: defaultMode, Optional: optional}}}
}

func secretVolume(name, object string, items []corev1.KeyToPath, defaultMode *int32, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: object, Items: items, DefaultMode: defaultMode, Optional: optional}}}
}

func fieldItem(path, field string) corev1.DownwardAPIVolumeFile {
	return corev1.DownwardAPIVolumeFile{Path: path, FieldRef: &corev1.ObjectFieldSelector{FieldPath: field}}
}

// testSources holds the objects the table below reads.
func testSources() *fakeSources {
	f := newFakeSources()
	f.configMaps["default/app-config"] = &corev1.ConfigMap{
		Data:       map[string]string{"app.conf": "level=debug", "other": "x"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2, 0xff}},
	}
	f.secrets["default/creds"] = &corev1.Secret{Data: map[string][]byte{"password": []byte("hunter2"), "user": []byte("admin")}}
	return f
}

// Each volume kind's files, names and modes, from its source.
func TestAPIDataVolumes(t *testing.T) {
	type fileWant struct {
		content string
		mode    os.FileMode
	}
	for _, tc := range []struct {
		name string
		vol  corev1.Volume
		kind string
		want map[string]fileWant
	}{
		{name: "configMap, all keys, binaryData, default mode", vol: cmVolume("cfg", "app-config", nil, nil, nil), kind: configMapDir,
			want: map[string]fileWant{"app.conf": {"level=debug", 0o644}, "other": {"x", 0o644}, "blob": {"\x00\x01\x02\xff", 0o644}}},
		{name: "configMap items, nested path, per-item mode and defaultMode", kind: configMapDir,
			vol:  cmVolume("cfg", "app-config", []corev1.KeyToPath{{Key: "app.conf", Path: "etc/app/app.conf", Mode: ptr[int32](0o600)}, {Key: "other", Path: "o"}}, ptr[int32](0o440), nil),
			want: map[string]fileWant{"etc/app/app.conf": {"level=debug", 0o600}, "o": {"x", 0o440}}},
		{name: "configMap optional key missing is skipped", kind: configMapDir,
			vol:  cmVolume("cfg", "app-config", []corev1.KeyToPath{{Key: "nope", Path: "n"}, {Key: "other", Path: "o"}}, nil, ptr(true)),
			want: map[string]fileWant{"o": {"x", 0o644}}},
		{name: "configMap optional and missing: empty volume", kind: configMapDir,
			vol: cmVolume("cfg", "ghost", nil, nil, ptr(true)), want: map[string]fileWant{}},
		{name: "secret with defaultMode", kind: secretDir, vol: secretVolume("s", "creds", nil, ptr[int32](0o400), nil),
			want: map[string]fileWant{"password": {"hunter2", 0o400}, "user": {"admin", 0o400}}},
		{name: "secret items", kind: secretDir, vol: secretVolume("s", "creds", []corev1.KeyToPath{{Key: "password", Path: "pw"}}, nil, nil),
			want: map[string]fileWant{"pw": {"hunter2", 0o644}}},
		{name: "secret optional and missing", kind: secretDir, vol: secretVolume("s", "ghost", nil, nil, ptr(true)), want: map[string]fileWant{}},
		{name: "downwardAPI fields and resources", kind: downwardAPIDir,
			vol: corev1.Volume{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
				fieldItem("labels", "metadata.labels"), fieldItem("annotations", "metadata.annotations"),
				fieldItem("name", "metadata.name"), fieldItem("ns", "metadata.namespace"), fieldItem("uid", "metadata.uid"),
				fieldItem("tier", "metadata.labels['tier']"),
				{Path: "mem", Mode: ptr[int32](0o400), ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: mustQuantity("1Mi")}},
				{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu", Divisor: mustQuantity("1m")}},
			}}}},
			want: map[string]fileWant{"labels": {"app=\"web\"\ntier=\"front\"", 0o644}, "annotations": {`note="a \"b\""`, 0o644},
				"name": {"web", 0o644}, "ns": {"default", 0o644}, "uid": {"u1", 0o644}, "tier": {"front", 0o644},
				"mem": {"256", 0o400}, "cpu": {"4000", 0o644}}}, // cpu from the node's allocatable
		{name: "projected: configMap, secret, downwardAPI, token", kind: projectedDir,
			vol: corev1.Volume{Name: "all", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr[int32](0o444), Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Items: []corev1.KeyToPath{{Key: "app.conf", Path: "app.conf"}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Items: []corev1.KeyToPath{{Key: "user", Path: "creds/user", Mode: ptr[int32](0o400)}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "ghost"}, Optional: ptr(true)}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{fieldItem("podname", "metadata.name")}}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "vault", ExpirationSeconds: ptr[int64](600)}},
			}}}},
			want: map[string]fileWant{"app.conf": {"level=debug", 0o444}, "creds/user": {"admin", 0o400}, "podname": {"web", 0o444}, "token": {"tok-1", 0o444}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := testSources()
			m, _ := newAPIManager(t, src)
			pod := apiPod(tc.vol)
			cleanupPod(t, m, pod)
			mounts, err := m.Setup(context.Background(), pod)
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			dir := filepath.Join(m.PodDir(pod.UID), "volumes", tc.kind, tc.vol.Name)
			wantMount := []corev1.VolumeMount{{Name: tc.vol.Name, MountPath: "/data"}}
			if got := mounts["app"]; len(got) != 1 || got[0].HostPath != dir || !got[0].ReadOnly || got[0].ContainerPath != wantMount[0].MountPath {
				t.Errorf("mounts = %+v, want %s read-only at /data", got, dir)
			}
			// Secrets, tokens and the pod's own fields stay off the disk:
			// a tmpfs the size of the pod's memory limit.
			var st unix.Statfs_t
			if err := unix.Statfs(dir, &st); err != nil {
				t.Fatal(err)
			}
			size := int64(st.Blocks) * st.Bsize // #nosec G115 -- a block count
			if tmpfs := st.Type == unix.TMPFS_MAGIC; tmpfs != inMemory(tc.kind) || tmpfs && size != 256<<20 {
				t.Errorf("the volume is a tmpfs: %v (%d bytes), want %v (of 256 MiB)", tmpfs, size, inMemory(tc.kind))
			}
			got := readVolume(t, dir)
			wantContent := map[string]string{}
			for p, f := range tc.want {
				wantContent[p] = f.content
				if mode := modeOfFile(t, filepath.Join(dir, p)); mode.Perm() != f.mode {
					t.Errorf("%s: mode %v, want %v", p, mode.Perm(), f.mode)
				}
			}
			if diff := cmp.Diff(wantContent, got); diff != "" {
				t.Errorf("volume content (-want +got):\n%s", diff)
			}
			if tc.vol.Projected != nil {
				if len(src.tokenReqs) != 1 || src.tokenReqs[0].Audience != "vault" || *src.tokenReqs[0].ExpirationSeconds != 600 {
					t.Errorf("token requests = %+v, want one for audience vault, 600 s", src.tokenReqs)
				}
			}
		})
	}
}

// apiPod is a pod from the apiserver whose container "app" mounts vol at
// /data.
func apiPod(vols ...corev1.Volume) *corev1.Pod {
	pod := podWith(vols, corev1.Container{Name: "app", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceMemory: mustQuantity("256Mi")}}})
	for _, v := range vols {
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/data"})
	}
	pod.Labels = map[string]string{"app": "web", "tier": "front"}
	pod.Annotations = map[string]string{"note": `a "b"`}
	pod.Spec.ServiceAccountName = "default"
	return pod
}

// What cannot be set up fails Setup with an error naming the volume, the
// object and why; a missing object's error stays NotFound.
func TestAPIDataVolumeErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vol      corev1.Volume
		sources  bool
		static   bool
		noAlloc  bool
		want     string
		wantErr  error
		notFound bool
	}{
		{name: "configMap standalone", vol: cmVolume("cfg", "app-config", nil, nil, ptr(true)),
			want: `volume "cfg": configMap volumes need connected mode`, wantErr: ErrUnsupportedVolume},
		{name: "secret standalone", vol: secretVolume("s", "creds", nil, nil, nil),
			want: `volume "s": secret volumes need connected mode`, wantErr: ErrUnsupportedVolume},
		{name: "a static pod's configMap, connected", sources: true, static: true, vol: cmVolume("cfg", "app-config", nil, nil, ptr(true)),
			want: `volume "cfg": a static pod's configMap volume cannot read API objects`, wantErr: ErrUnsupportedVolume},
		{name: "a static pod's projected token", sources: true, static: true, vol: corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{}}, {ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}},
			want: `volume "p": a static pod's projected volume cannot read API objects`, wantErr: ErrUnsupportedVolume},
		{name: "required configMap missing", sources: true, vol: cmVolume("cfg", "ghost", nil, nil, nil),
			want: `volume "cfg": configmap default/ghost: configmaps "ghost" not found`, notFound: true},
		{name: "required secret missing", sources: true, vol: secretVolume("s", "ghost", nil, nil, ptr(false)),
			want: `volume "s": secret default/ghost: secrets "ghost" not found`, notFound: true},
		{name: "required key missing", sources: true, vol: cmVolume("cfg", "app-config", []corev1.KeyToPath{{Key: "nope", Path: "n"}}, nil, nil),
			want: `volume "cfg": configmap default/app-config has no key "nope"`},
		{name: "item path climbing out", sources: true, vol: cmVolume("cfg", "app-config", []corev1.KeyToPath{{Key: "other", Path: "a/../../x"}}, nil, nil),
			want: `volume "cfg": path "a/../../x" must not contain ".."`, wantErr: ErrInvalidMount},
		{name: "absolute item path", sources: true, vol: secretVolume("s", "creds", []corev1.KeyToPath{{Key: "user", Path: "/etc/passwd"}}, nil, nil),
			want: `volume "s": path "/etc/passwd" must be relative`, wantErr: ErrInvalidMount},
		{name: "item path over the agent's own links", sources: true, vol: cmVolume("cfg", "app-config", []corev1.KeyToPath{{Key: "other", Path: "..data"}}, nil, nil),
			want: `volume "cfg": path "..data" must not start with ".."`, wantErr: ErrInvalidMount},
		{name: "clusterTrustBundle", sources: true, vol: corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "b"}}}}}},
			want: `volume "p": sources[0]: clusterTrustBundle sources are not provided`, wantErr: ErrUnsupportedVolume},
		{name: "podCertificate", sources: true, vol: corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{PodCertificate: &corev1.PodCertificateProjection{}}}}}},
			want: `podCertificate sources are not provided`, wantErr: ErrUnsupportedVolume},
		{name: "resource limit without allocatable", sources: true, noAlloc: true, vol: corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}}}}}},
			want: `volume "d": downwardAPI item "cpu": resourceFieldRef limits.cpu of container "app": no limit set, and the node's allocatable is unknown`},
		{name: "downwardAPI status field", sources: true, vol: corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{fieldItem("ip", "status.podIP")}}}},
			want: `volume "d": downwardAPI item "ip": fieldRef "status.podIP": a volume may name only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m *Manager
			switch {
			case !tc.sources:
				m, _ = newManager(t)
			case tc.noAlloc:
				var err error
				if m, err = New(Options{RootDir: t.TempDir(), Sources: testSources()}); err != nil {
					t.Fatal(err)
				}
			default:
				m, _ = newAPIManager(t, testSources())
			}
			pod := apiPod(tc.vol)
			if tc.static {
				pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
			}
			cleanupPod(t, m, pod)
			_, err := m.Setup(context.Background(), pod)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Setup error = %v, want one saying %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v is not %v", err, tc.wantErr)
			}
			if apierrors.IsNotFound(err) != tc.notFound {
				t.Errorf("apierrors.IsNotFound = %v, want %v", !tc.notFound, tc.notFound)
			}
		})
	}
}

// Without sources (standalone), and for a static pod, the downward API
// needs no apiserver: a downwardAPI volume and a projected one of
// downwardAPI sources only are set up.
func TestDownwardAPIStandalone(t *testing.T) {
	m, _ := newManager(t)
	pod := apiPod(
		corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{fieldItem("name", "metadata.name")}}}},
		corev1.Volume{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{fieldItem("ns", "metadata.namespace")}}}}}}},
	)
	pod.Annotations[podtypes.ConfigSourceAnnotationKey] = string(podtypes.FileSource)
	cleanupPod(t, m, pod)
	if _, err := m.Setup(context.Background(), pod); err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if got := readVolume(t, m.volumeDir(pod.UID, downwardAPIDir, "d")); got["name"] != "web" {
		t.Errorf("downwardAPI volume = %v", got)
	}
	if got := readVolume(t, m.volumeDir(pod.UID, projectedDir, "p")); got["ns"] != "default" {
		t.Errorf("projected volume = %v", got)
	}
}
