package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// canonical reads a v1 List (mpigen's objects) and prints it as the API server would store it: each
// object decoded into its Go type and encoded again (quantities in canonical form, fields the type
// omits when empty or false left out; a field it does not know is an error), without status, so
// that it compares with the operator's.
func canonical(r io.Reader, scheme *runtime.Scheme) ([]map[string]any, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	objects := []map[string]any{}
	for _, raw := range list.Items {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
		gv, err := schema.ParseGroupVersion(meta.APIVersion)
		if err != nil {
			return nil, err
		}
		typed, err := scheme.New(gv.WithKind(meta.Kind))
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", meta.APIVersion, meta.Kind, err)
		}
		// Strict: a field the pinned Go type lacks would otherwise vanish from mpigen's side unseen.
		decoder := json.NewDecoder(bytes.NewReader(raw))
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(typed); err != nil {
			return nil, fmt.Errorf("%s %s: %w", meta.APIVersion, meta.Kind, err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
		if err != nil {
			return nil, err
		}
		u["apiVersion"], u["kind"] = meta.APIVersion, meta.Kind
		delete(u, "status")
		delete(u["metadata"].(map[string]any), "creationTimestamp")
		objects = append(objects, u)
	}
	return objects, nil
}
