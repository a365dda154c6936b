// Wrapper module: builds ps-http-sim pinned in scripts/testenv/versions.env.
module modeldock.local/pssim

go 1.26.0

require github.com/mattrobenolt/ps-http-sim v0.0.12

require (
	connectrpc.com/connect v1.18.1 // indirect
	github.com/AdaLogics/go-fuzz-headers v0.0.0-20240806141605-e8a1dd7889d6 // indirect
	github.com/golang/glog v1.2.4 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/matoous/go-nanoid/v2 v2.1.0 // indirect
	github.com/pires/go-proxyproto v0.8.0 // indirect
	github.com/planetscale/log v0.0.0-20230818230039-324540f3f1cf // indirect
	github.com/planetscale/psdb v0.0.0-20250102225212-5e0969e17235 // indirect
	github.com/planetscale/vitess-types v0.0.0-20250102225031-46661e124a3a // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20241121165744-79df5c4772f2 // indirect
	github.com/segmentio/asm v1.2.0 // indirect
	github.com/spf13/pflag v1.0.6 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/net v0.35.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.22.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250207221924-e9438ea467c6 // indirect
	google.golang.org/grpc v1.70.0 // indirect
	google.golang.org/protobuf v1.36.5 // indirect
	vitess.io/vitess v0.21.2 // indirect
)
