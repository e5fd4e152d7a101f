// A self-signed certificate for 127.0.0.1 and localhost, valid until 2126, made with:
// openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 \
//   -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"
// It is for the TLS mode of TestOrigin: no client trusts it unless a test adds it as a trust root.
public enum TestCertificate {
    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBmjCCAUGgAwIBAgIUN+6QTJUmcTgXIsrK5q5sLcSy4OswCgYIKoZIzj0EAwIw
        FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMjE2MTIwMFoYDzIxMjYxMDI5
        MTYxMjAwWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
        PQMBBwNCAASnPy9pmZhwwgJZ9e9FqUXAYQA03+QzXPfYcKV3MK2jZylrKbnfDUB5
        bDKs2mloyKakgzgMZBF+Fq+8bhymdUubo28wbTAdBgNVHQ4EFgQUzro83RopdlyH
        NUIBpgWqrxYRdAAwHwYDVR0jBBgwFoAUzro83RopdlyHNUIBpgWqrxYRdAAwDwYD
        VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwCgYIKoZI
        zj0EAwIDRwAwRAIgHz2zoNQtRL531rs5sCQfk0itNsCJ4r07zWfNW9zbKpUCIE8d
        LoArG0cAjIaXp+oW8GMaNVWWNrVeYZEwWB+Zed4R
        -----END CERTIFICATE-----
        """

    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPEcnMlU9l/041q6w
        RRgabbpdS7DUfeRm3ZmjD1y077KhRANCAASnPy9pmZhwwgJZ9e9FqUXAYQA03+Qz
        XPfYcKV3MK2jZylrKbnfDUB5bDKs2mloyKakgzgMZBF+Fq+8bhymdUub
        -----END PRIVATE KEY-----
        """
}
