/// The S3 operations s3faults.py tells apart, by method, path and query.
public enum S3Operation: String, Sendable, CaseIterable {
    case listBuckets = "ListBuckets"
    case createBucket = "CreateBucket", deleteBucket = "DeleteBucket", headBucket = "HeadBucket"
    case listObjects = "ListObjects", listObjectsV2 = "ListObjectsV2"
    case getObject = "GetObject", headObject = "HeadObject", putObject = "PutObject"
    case copyObject = "CopyObject", deleteObject = "DeleteObject", deleteObjects = "DeleteObjects"
    case createMultipartUpload = "CreateMultipartUpload", uploadPart = "UploadPart", uploadPartCopy = "UploadPartCopy"
    case completeMultipartUpload = "CompleteMultipartUpload", abortMultipartUpload = "AbortMultipartUpload"
    case listParts = "ListParts", listMultipartUploads = "ListMultipartUploads"
    case postObject = "PostObject"
}
