import Foundation
import GatewaySetup
import Testing

/// The keys of an S3 upstream (issue 15).
@Suite("GatewayConfig S3 upstreams")
struct S3SettingsTests {
    @Test("s3://BUCKET/PREFIX/ with endpoint, region, path style, markers and threshold; AWS's endpoint by default")
    func keys() throws {
        let folder = try TemporaryFolder()
        let config = try GatewayConfig.load(from: try folder.config("""
            [[domain]]
            name = "minio"
            upstream = "s3://team-bucket/shared/docs"
            endpoint = "http://127.0.0.1:9000"
            region = "eu-central-1"
            path_style = true
            folder_markers = "hidden"
            multipart_threshold = "64 MiB"
            credentials = { service = "s3", account = "AKIAEXAMPLE" }

            [[domain]]
            name = "aws"
            upstream = "s3://my.bucket/"
            credentials = { service = "s3", account = "AKIAEXAMPLE" }
            """))
        guard case .s3(let minio) = config.domains[0].upstream, case .s3(let aws) = config.domains[1].upstream else {
            Issue.record("not S3 upstreams: \(config.domains.map(\.upstream))")
            return
        }
        #expect(minio == S3Location(bucket: "team-bucket", prefix: "shared/docs/", endpoint: URL(string: "http://127.0.0.1:9000")!,
                                    region: "eu-central-1", pathStyle: true, folderMarkers: "hidden", multipartThreshold: 64 << 20))
        #expect(aws == S3Location(bucket: "my.bucket", prefix: "", endpoint: URL(string: "https://s3.us-east-1.amazonaws.com")!))
        #expect("\(config.domains[0].upstream)" == "s3://team-bucket/shared/docs/")
        #expect(config.domains[0].upstreamLine == 3)
    }

    @Test("bad S3 settings are refused naming the key", arguments: [
        ("upstream = \"s3://Bad_Bucket/\"\ncredentials = { service = \"s3\", account = \"a\" }", "upstream"),
        ("upstream = \"s3://b/a//b/\"\ncredentials = { service = \"s3\", account = \"a\" }", "upstream"),
        ("upstream = \"s3://bucket/\"", "credentials"),
        ("upstream = \"s3://bucket/\"\nendpoint = \"ftp://x\"\ncredentials = { service = \"s3\", account = \"a\" }", "endpoint"),
        ("upstream = \"s3://bucket/\"\nendpoint = \"https://x/path\"\ncredentials = { service = \"s3\", account = \"a\" }", "endpoint"),
        ("upstream = \"s3://bucket/\"\nfolder_markers = \"dots\"\ncredentials = { service = \"s3\", account = \"a\" }", "folder_markers"),
        ("upstream = \"s3://bucket/\"\nmultipart_threshold = \"1 MiB\"\ncredentials = { service = \"s3\", account = \"a\" }", "multipart_threshold"),
        ("upstream = \"s3://bucket/\"\nmirror_locks = true\ncredentials = { service = \"s3\", account = \"a\" }", "mirror_locks"),
        ("upstream = \"file:../var/upstream\"\npath_style = true", "path_style"),
        ("upstream = \"https://dav.example/\"\nendpoint = \"https://x\"", "endpoint"),
    ])
    func refusals(lines: String, key: String) throws {
        let folder = try TemporaryFolder()
        #expect {
            _ = try GatewayConfig.load(from: try folder.config("[[domain]]\nname = \"x\"\n\(lines)\n"))
        } throws: { error in
            "\(error)".contains(key)
        }
    }
}
